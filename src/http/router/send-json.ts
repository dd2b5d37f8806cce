/**
 * Writes a complete JSON answer straight to the Node response: no web Response and no Headers
 * object (the route then returns ANSWERED). The body goes out at the client's pace (write-body.ts).
 */
import type { ServerResponse } from "node:http";
import { writeBody } from "./write-body.js";

export function sendJson(
  outgoing: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
  /** How long a client may take nothing while the answer waits for it; default 60 s. */
  readTimeoutMs?: number,
): void {
  const byteLength = Buffer.byteLength(body);
  // A Content-Length for the whole body: no chunked encoding. Written before the spread: a literal
  // that starts with a spread is slow to extend on this V8.
  outgoing.writeHead(status, { "Content-Length": byteLength, ...headers });
  writeBody(outgoing, body, byteLength, readTimeoutMs);
}
