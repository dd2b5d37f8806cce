/**
 * Raw TCP connections to a gateway, for tests of what a client library would never do: open a
 * connection and send nothing, send half a request, or never read the answer.
 */
import { connect, type Socket } from "node:net";

export interface RawConnection {
  socket: Socket;
  /** Everything the server wrote (empty for a connection opened with `read: false`). */
  received(): string;
  /** Resolves when the connection is closed (by either side), with when (performance.now()). */
  closed: Promise<number>;
  isClosed(): boolean;
}

/**
 * A connection to 127.0.0.1:`port`, connected when this resolves (from `localAddress` when given,
 * another loopback address standing for another client). `read: false`: the socket is paused at
 * once and nothing it receives is ever read.
 */
export async function openRawConnection(
  port: number,
  options: { localAddress?: string; read?: boolean } = {},
): Promise<RawConnection> {
  const socket = connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
  let data = "";
  let closedAt: number | undefined;
  if (options.read === false) socket.pause();
  else {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      data += chunk;
    });
  }
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) =>
    socket.once("close", () => {
      closedAt = performance.now();
      resolve(closedAt);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("close", () => reject(new Error("closed before connecting")));
  });
  return { socket, received: () => data, closed, isClosed: () => closedAt !== undefined };
}

/**
 * Sends `text` on a fresh connection; resolves with what came back once the server closed the
 * connection (or after `timeoutMs`, when the connection is dropped), and how long that took.
 */
export async function exchangeOnNewConnection(
  port: number,
  text: string,
  timeoutMs = 5_000,
): Promise<{ answer: string; ms: number }> {
  const startedAt = performance.now();
  const raw = await openRawConnection(port);
  raw.socket.write(text);
  const timer = setTimeout(() => raw.socket.destroy(), timeoutMs);
  await raw.closed;
  clearTimeout(timer);
  return { answer: raw.received(), ms: performance.now() - startedAt };
}

/** A GET that asks the server to close the connection after answering. */
export function rawGet(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
}

/** A POST of `body` as JSON with a bearer key, asking the server to close the connection after. */
export function rawPostJson(path: string, apiKey: string, body: unknown, keepAlive = false): string {
  const json = JSON.stringify(body);
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
    `${keepAlive ? "" : "Connection: close\r\n"}\r\n${json}`
  );
}
