/**
 * `GET /`: someone who opens the gateway's address in a browser lands on the web console, which
 * links the API reference, instead of a JSON 404.
 */
import type { RouteDefinition } from "../router/route-definition.js";

export function createHomeRoute(): RouteDefinition {
  return {
    method: "GET",
    path: "/",
    summary: "Redirect to the web console (/console)",
    responses: { 302: { description: "Found: Location /console" } },
    handler: (c) => c.redirect("/console", 302),
  };
}
