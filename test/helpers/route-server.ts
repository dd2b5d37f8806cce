/**
 * A loopback HTTP server serving a few entries of the route table (say, the admin API alone),
 * through the same router and listener as the gateway, plus a liveness probe.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRouter } from "../../src/http/router/create-app.js";
import { createRequestListener } from "../../src/http/router/request-listener.js";
import type { RouteDefinition } from "../../src/http/router/route-definition.js";
import { createLogger } from "../../src/logging/logger.js";

const LIVENESS: RouteDefinition = {
  method: "GET",
  path: "/healthz",
  summary: "Liveness",
  responses: {},
  handler: (c) => c.json({ status: "ok" }),
};

export interface RouteServer {
  url: string;
  close(): Promise<void>;
}

export async function startRouteServer(routes: readonly RouteDefinition[]): Promise<RouteServer> {
  const router = createRouter([LIVENESS, ...routes], createLogger("silent"));
  const server = createServer(createRequestListener({ router }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
