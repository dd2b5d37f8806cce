/**
 * The router's CORS over a small route table on loopback: the answers written outside a handler's
 * own path (the in-flight cap's 429, the 500 of an unhandled error) carry it too, and a malformed
 * `Access-Control-Request-Headers` is not reflected.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createLogger } from "../../logging/logger.js";
import { createRouter } from "./create-app.js";
import { createInFlightRequests } from "./in-flight-requests.js";
import { createRequestListener } from "./request-listener.js";
import type { RouteDefinition } from "./route-definition.js";

const ORIGIN = "https://app.example.com";

const ROUTES: RouteDefinition[] = [
  {
    method: "POST",
    path: "/api/v1/fails",
    summary: "A public route whose handler throws",
    responses: {},
    publicApi: true,
    handler: () => {
      throw new Error("a bug");
    },
  },
  {
    method: "GET",
    path: "/private",
    summary: "Not public",
    responses: {},
    handler: (c) => c.text("private"),
  },
];

async function startServer(t: { after(fn: () => unknown): void }, draining = false) {
  const router = createRouter(ROUTES, createLogger("silent"), ["*"]);
  const inFlight = createInFlightRequests(10);
  if (draining) inFlight.startDraining();
  const server = createServer(createRequestListener({ router, inFlight }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("the 500 of an unhandled error on a public route carries CORS; a private route none", async (t) => {
  const url = await startServer(t);
  const failed = await fetch(`${url}/api/v1/fails`, { method: "POST", headers: { Origin: ORIGIN } });
  assert.equal(failed.status, 500);
  assert.equal(failed.headers.get("access-control-allow-origin"), "*");
  assert.match(failed.headers.get("access-control-expose-headers") ?? "", /X-Request-Id/);
  const other = await fetch(`${url}/private`, { headers: { Origin: ORIGIN } });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get("access-control-allow-origin"), null);
});

test("the in-flight cap's 429 on a public path carries CORS and exposes Retry-After", async (t) => {
  const url = await startServer(t, true);
  const refused = await fetch(`${url}/api/v1/fails`, { method: "POST", headers: { Origin: ORIGIN } });
  assert.equal(refused.status, 429);
  assert.ok(refused.headers.get("retry-after"));
  assert.equal(refused.headers.get("access-control-allow-origin"), "*");
  assert.match(refused.headers.get("access-control-expose-headers") ?? "", /Retry-After/);
  const privateRefused = await fetch(`${url}/private`, { headers: { Origin: ORIGIN } });
  assert.equal(privateRefused.status, 429);
  assert.equal(privateRefused.headers.get("access-control-allow-origin"), null);
});

test("a preflight reflects a list of header names, and nothing else", async (t) => {
  const url = await startServer(t);
  const ask = (requested: string) =>
    fetch(`${url}/api/v1/fails`, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": requested,
      },
    });
  const good = await ask("Authorization,Content-Type");
  assert.equal(good.status, 204);
  assert.equal(good.headers.get("access-control-allow-headers"), "Authorization,Content-Type");
  assert.equal(good.headers.get("access-control-allow-methods"), "POST");
  assert.equal(good.headers.get("allow"), "POST, OPTIONS");
  const bad = await ask("authorization; x=1");
  assert.equal(bad.status, 204);
  assert.equal(bad.headers.get("access-control-allow-headers"), null);
  assert.equal(bad.headers.get("access-control-allow-origin"), "*");
});
