/**
 * An HTTP pass-through between an agent CLI and the gateway that records every exchange: method,
 * path, the request's headers and body, the status the gateway answered, and for a WebSocket
 * upgrade the handshake's status. The client suite (test/clients) reads it to assert that the
 * gateway answered no 4xx, and records the clients' request shapes from it (test/fixtures/clients).
 *
 * It listens on a Unix socket when the CLI runs in a loopback-only network namespace (the relay
 * inside forwards to it, see loopback-namespace.ts), else on 127.0.0.1 with a port of its own.
 */
import { randomBytes } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { join } from "node:path";

export interface BridgedExchange {
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: string;
  /** The gateway's status: 101 for an accepted WebSocket upgrade; 0 when no answer came. */
  status: number;
  upgrade: boolean;
}

export interface WireBridge {
  /** Where the bridge listens: a Unix socket path, or `http://127.0.0.1:<port>`. */
  readonly listening: string;
  readonly exchanges: readonly BridgedExchange[];
  close(): Promise<void>;
}

export async function startWireBridge(
  gatewayUrl: string,
  options: { socketDir?: string } = {},
): Promise<WireBridge> {
  const target = new URL(gatewayUrl);
  const exchanges: BridgedExchange[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    const exchange: BridgedExchange = {
      method: incoming.method ?? "GET",
      path: incoming.url ?? "/",
      requestHeaders: incoming.headers,
      requestBody: "",
      status: 0,
      upgrade: false,
    };
    exchanges.push(exchange);
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        exchange.status = answer.statusCode ?? 0;
        outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(outgoing);
      },
    );
    forward.on("error", () => outgoing.destroy());
    outgoing.on("close", () => forward.destroy());
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      exchange.requestBody = Buffer.concat(chunks).toString("utf8");
    });
    incoming.pipe(forward);
  });
  // A WebSocket handshake goes through as bytes; the gateway's status line is read off the reply.
  server.on("upgrade", (incoming, socket, head) => {
    const exchange: BridgedExchange = {
      method: incoming.method ?? "GET",
      path: incoming.url ?? "/",
      requestHeaders: incoming.headers,
      requestBody: "",
      status: 0,
      upgrade: true,
    };
    exchanges.push(exchange);
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${incoming.method} ${incoming.url} HTTP/1.1`];
      for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
        lines.push(`${incoming.rawHeaders[i]}: ${incoming.rawHeaders[i + 1]}`);
      }
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.once("data", (first: Buffer) => {
        const match = /^HTTP\/1\.1 (\d{3})/.exec(first.toString("latin1"));
        exchange.status = match ? Number(match[1]) : 0;
      });
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  server.keepAliveTimeout = 30_000;
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  let listening: string;
  if (options.socketDir !== undefined) {
    const path = join(options.socketDir, `bridge-${randomBytes(4).toString("hex")}.sock`);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    listening = path;
  } else {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    listening = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  return {
    listening,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
