/**
 * The floor: the least a Node gateway can do. It reads the JSON body, parses it (as any gateway
 * must to route), re-serialises it, forwards it to the upstream over a keep-alive undici pool (the
 * client the gateway uses) and pipes the answer back unchanged. No auth, no accounting, no
 * translation: what the gateway costs beyond this is what its features cost.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Pool } from "undici";

export interface BareProxy {
  port: number;
  origin: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 10 * 1024 * 1024;

export async function startBareProxy(options: { upstreamOrigin: string; port?: number }): Promise<BareProxy> {
  // Same pool settings as the gateway's upstream client: keep-alive, one request per socket.
  const pool = new Pool(options.upstreamOrigin, { pipelining: 1, keepAliveTimeout: 30_000 });
  const sockets = new Set<Socket>();
  const server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
    void forward(pool, request, response).catch((error: Error) => fail(response, 502, error.message));
  });
  server.on("connection", (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      await pool.destroy();
    },
  };
}

async function forward(pool: Pool, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return fail(response, 413, "body too large");
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
  } catch {
    return fail(response, 400, "body is not JSON");
  }
  // No AbortController: one per request (and its DOMException on abort) costs ~10 % of this
  // proxy's CPU; a client that leaves mid-answer destroys the upstream body instead (below).
  const upstream = await pool.request({
    path: request.url ?? "/",
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-bench-upstream",
    },
    body: JSON.stringify(body),
  });
  response.writeHead(upstream.statusCode, {
    "content-type": String(upstream.headers["content-type"] ?? "application/json"),
  });
  // `.pipe` rather than `stream.pipeline`: on Node 20 pipeline creates and aborts an
  // AbortController per call (a DOMException each time), which would inflate the floor.
  upstream.body.once("error", () => response.destroy());
  response.once("close", () => {
    if (!upstream.body.readableEnded) upstream.body.destroy();
  });
  upstream.body.pipe(response);
}

function fail(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ error: { message, type: "bench_proxy_error" } }));
}
