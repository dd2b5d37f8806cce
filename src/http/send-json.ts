/**
 * Writes a complete JSON answer straight to the Node response: no web Response, no Headers object
 * and no bridging by @hono/node-server (the route then returns RESPONSE_ALREADY_SENT).
 */
import type { ServerResponse } from "node:http";

export function sendJson(
  outgoing: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  // A Content-Length, as @hono/node-server sets for string bodies (no chunked encoding).
  outgoing.writeHead(status, { ...headers, "Content-Length": Buffer.byteLength(body) });
  outgoing.end(body);
}
