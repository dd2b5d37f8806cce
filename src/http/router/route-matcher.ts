/**
 * Finds the route of a method and path in the route table: exact paths by one map lookup, paths
 * with parameters by their compiled patterns in table order. Also answers which methods serve a
 * path, for the 405 of a path served under other methods.
 */
import type { RouteDefinition } from "./route-definition.js";

export interface RouteMatch {
  route: RouteDefinition;
  params: Readonly<Record<string, string>>;
}

interface PatternRoute {
  route: RouteDefinition;
  pattern: RegExp;
  names: string[];
}

const METHOD_ORDER: readonly string[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

export interface RouteMatcher {
  match(method: string, path: string): RouteMatch | undefined;
  /** The methods `path` is served with (HEAD wherever GET is), in a stable order. */
  allowedMethods(path: string): string[];
}

export function createRouteMatcher(routes: readonly RouteDefinition[]): RouteMatcher {
  const exact = new Map<string, Map<string, RouteDefinition>>();
  const patterns = new Map<string, PatternRoute[]>();
  for (const route of routes) {
    if (!route.path.includes("{")) {
      const paths = exact.get(route.method) ?? new Map<string, RouteDefinition>();
      paths.set(route.path, route);
      exact.set(route.method, paths);
      continue;
    }
    const list = patterns.get(route.method) ?? [];
    list.push(compile(route));
    patterns.set(route.method, list);
  }
  const methods = METHOD_ORDER.filter((method) => routes.some((route) => route.method === method));

  const match = (method: string, path: string): RouteMatch | undefined => {
    const route = exact.get(method)?.get(path);
    if (route !== undefined) return { route, params: NO_PARAMS };
    for (const candidate of patterns.get(method) ?? []) {
      const found = candidate.pattern.exec(path);
      if (found === null) continue;
      const params: Record<string, string> = {};
      candidate.names.forEach((name, index) => {
        params[name] = decodeParam(found[index + 1]);
      });
      return { route: candidate.route, params };
    }
    return undefined;
  };

  return {
    match,
    allowedMethods(path) {
      const allowed = methods.filter((method) => match(method, path) !== undefined);
      const get = allowed.indexOf("GET");
      if (get !== -1) allowed.splice(get + 1, 0, "HEAD");
      return allowed;
    },
  };
}

/** `{name}` is one path segment; a `paramPatterns` entry lets it span more (`.+`). */
function compile(route: RouteDefinition): PatternRoute {
  const names: string[] = [];
  const source = route.path
    .split(/(\{\w+\})/)
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
      names.push(name);
      return `(${route.paramPatterns?.[name] ?? "[^/]+"})`;
    })
    .join("");
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** A parameter as sent percent-encoded (`openai%2Fgpt-4.1`) reads as its text. */
function decodeParam(value: string): string {
  if (!value.includes("%")) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
