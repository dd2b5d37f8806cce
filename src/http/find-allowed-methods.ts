/**
 * The methods a path is served with, for the 405 answer of a request whose path exists under
 * another method. Asks the application's own router, so the answer follows the routes as
 * registered; middleware (registered for every method) does not count as serving a path.
 */
import type { Hono } from "hono";
import type { AppEnv } from "./app-env.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** A router entry: the handler and the route it was registered with (Hono's `[H, RouterRoute]`). */
type RouterEntry = [[unknown, { method: string }], unknown];

export function findAllowedMethods(app: Hono<AppEnv>, path: string): string[] {
  const allowed: string[] = [];
  for (const method of METHODS) {
    const [entries] = app.router.match(method, path) as unknown as [RouterEntry[]];
    if (entries.some(([[, route]]) => route.method === method)) allowed.push(method);
  }
  // Hono answers HEAD with the GET route.
  if (allowed.includes("GET")) allowed.splice(1, 0, "HEAD");
  return allowed;
}
