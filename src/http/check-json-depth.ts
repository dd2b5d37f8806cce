/**
 * Refuses a parsed body nested deeper than {@link MAX_JSON_DEPTH} with `invalid_request`.
 *
 * `JSON.parse` takes any depth, but much of what follows recurses on the value (validation,
 * `JSON.stringify` of schemas and of the upstream body) and would overflow the stack on a body
 * nested a hundred thousand levels deep: a 500 for bad input. Real requests nest a few levels,
 * JSON schemas a few dozen. The walk visits each object and array once, skips strings, allocates
 * nothing, and its own recursion stops at the limit.
 */
import { GatewayError } from "../errors/gateway-error.js";

export const MAX_JSON_DEPTH = 128;

export function checkJsonDepth(value: unknown, maxDepth = MAX_JSON_DEPTH): void {
  const path = findTooDeep(value, 1, maxDepth);
  if (path === undefined) return;
  const param = path
    .slice(0, 4)
    .reduce<string>(
      (joined, key) =>
        typeof key === "number" ? `${joined}[${key}]` : joined === "" ? key : `${joined}.${key}`,
      "",
    );
  throw GatewayError.invalidRequest(
    `${param} is nested more than ${maxDepth} levels deep; JSON in a request may nest at most ${maxDepth} levels`,
    param,
  );
}

/** The keys down to the first container deeper than `maxDepth`, or undefined. */
function findTooDeep(value: unknown, depth: number, maxDepth: number): Array<string | number> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (depth > maxDepth) return [];
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (typeof item !== "object" || item === null) continue;
      const path = findTooDeep(item, depth + 1, maxDepth);
      if (path !== undefined) {
        path.unshift(index);
        return path;
      }
    }
    return undefined;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item !== "object" || item === null) continue;
    const path = findTooDeep(item, depth + 1, maxDepth);
    if (path !== undefined) {
      path.unshift(key);
      return path;
    }
  }
  return undefined;
}
