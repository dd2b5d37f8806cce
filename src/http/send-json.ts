/**
 * Writes a complete JSON answer straight to the Node response: no web Response and no Headers
 * object (the route then returns ANSWERED).
 */
import type { ServerResponse } from "node:http";

export function sendJson(
  outgoing: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  // A Content-Length for the whole body: no chunked encoding. Written before the spread: a literal
  // that starts with a spread is slow to extend on this V8.
  outgoing.writeHead(status, { "Content-Length": Buffer.byteLength(body), ...headers });
  outgoing.end(body);
}
