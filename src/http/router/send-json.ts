/**
 * Writes a complete JSON answer straight to the Node response: no web Response and no Headers
 * object (the route then returns ANSWERED). The body goes out at the client's pace (write-body.ts).
 */
import type { ServerResponse } from "node:http";
import { RESPONSE_HIGH_WATER_BYTES } from "./response-high-water.js";
import { writeBody } from "./write-body.js";

export function sendJson(
  outgoing: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
  /** How long a client may take nothing while the answer waits for it; default 60 s. */
  readTimeoutMs?: number,
): void {
  // A body past one slice is written from its bytes (write-body.ts): encoded once, and its
  // length read from them rather than from a second pass over the text.
  const content = body.length > RESPONSE_HIGH_WATER_BYTES ? Buffer.from(body) : body;
  const byteLength = typeof content === "string" ? Buffer.byteLength(content) : content.byteLength;
  // A Content-Length for the whole body: no chunked encoding. Written before the spread: a literal
  // that starts with a spread is slow to extend on this V8.
  outgoing.writeHead(status, { "Content-Length": byteLength, ...headers });
  writeBody(outgoing, content, byteLength, readTimeoutMs);
}
