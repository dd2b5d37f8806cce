import { createServer } from "node:http";
import { createLogger } from "../src/logging/logger.js";
const mode = process.argv[2];
const logger = createLogger("silent");
const handler = async (x: { incoming: import("node:http").IncomingMessage; outgoing: import("node:http").ServerResponse; requestId: string; headers: { get(n: string): string | null } }) => {
  x.headers.get("authorization");
  for await (const _ of x.incoming) { /* read body */ }
  const body = '{"ok":true}';
  x.outgoing.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length, "X-Request-Id": x.requestId });
  x.outgoing.end(body);
};
let listener;
if (mode === "old") {
  const { createRequestListener } = await import("/work/wt/routes-base/src/http/request-listener.ts");
  const { Hono } = await import("/work/main/node_modules/hono/dist/index.js");
  const app = new Hono();
  listener = createRequestListener({ fetch: app.fetch, directPosts: new Map([["/api/v1/chat/completions", handler as never]]), logger, inFlight: undefined });
} else {
  const { createRouter } = await import("../src/http/create-app.js");
  const { createNodeRouteHandler } = await import("../src/http/node-route-handler.js");
  const { createRequestListener } = await import("../src/http/request-listener.js");
  const app = createRouter([{ method: "POST", path: "/api/v1/chat/completions", summary: "", responses: {}, handler: createNodeRouteHandler(handler as never) },
    { method: "POST", path: "/api/v1/responses", summary: "", responses: {}, handler: createNodeRouteHandler(handler as never) },
    { method: "GET", path: "/internal/admin/keys/{id}", summary: "", responses: {}, handler: (c) => c.text("x") }], logger);
  listener = createRequestListener({ fetch: app.fetch });
}
const server = createServer(listener);
server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
process.on("SIGINT", () => process.exit(0));
process.on("message", (m) => { if (m === "cpu") process.send!({ cpu: process.cpuUsage() }); });
