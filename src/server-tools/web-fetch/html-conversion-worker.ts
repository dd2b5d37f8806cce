/**
 * The worker thread that turns fetched HTML into markdown (html-conversion-pool.ts): decoding,
 * parsing and Readability take CPU in proportion to the page, and here they never pause request
 * handling. One job at a time; a job that overruns its deadline is ended by terminating the thread.
 */
import { parentPort } from "node:worker_threads";
import { decodeText } from "./decode-text.js";
import { convertHtmlToMarkdown } from "./html-to-markdown.js";

export interface ConversionRequest {
  id: number;
  html: Uint8Array;
  charset: string | null;
  pageUrl: string;
}

export type ConversionReply =
  | { id: number; ok: true; title: string | null; markdown: string; readable: boolean }
  | { id: number; ok: false; message: string };

const port = parentPort;
if (!port) throw new Error("html-conversion-worker runs as a worker thread");
port.on("message", (request: ConversionRequest) => {
  let reply: ConversionReply;
  try {
    const html = decodeText(request.html, request.charset, true);
    reply = { id: request.id, ok: true, ...convertHtmlToMarkdown(html, request.pageUrl) };
  } catch (error) {
    reply = { id: request.id, ok: false, message: (error as Error).message };
  }
  port.postMessage(reply);
});
