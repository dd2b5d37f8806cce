/**
 * The worker thread that turns fetched HTML into markdown (html-conversion-pool.ts): decoding,
 * bounding the page's tree, parsing and Readability take CPU in proportion to the page, and here
 * they never pause request handling. It says `ready` once its modules are loaded, then takes one
 * job at a time; a job that overruns its deadline is ended by terminating the thread.
 */
import { parentPort } from "node:worker_threads";
import { boundHtmlStructure } from "./bound-html-structure.js";
import { decodeText } from "./decode-text.js";
import { convertHtmlToMarkdown } from "./html-to-markdown.js";

export interface ConversionRequest {
  id: number;
  html: Uint8Array;
  charset: string | null;
  pageUrl: string;
  maxDepth: number;
  maxElements: number;
}

export type ConversionReply =
  | { ready: true }
  | {
      id: number;
      ok: true;
      title: string | null;
      markdown: string;
      readable: boolean;
      /** The page was cut at the element bound. */
      cut: boolean;
    }
  | { id: number; ok: false; message: string };

const port = parentPort;
if (!port) throw new Error("html-conversion-worker runs as a worker thread");
port.on("message", (request: ConversionRequest) => {
  let reply: ConversionReply;
  try {
    const html = decodeText(request.html, request.charset, true);
    const bounded = boundHtmlStructure(html, {
      maxDepth: request.maxDepth,
      maxElements: request.maxElements,
    });
    const page = convertHtmlToMarkdown(bounded.html, request.pageUrl);
    reply = {
      id: request.id,
      ok: true,
      title: page.title,
      markdown: page.markdown,
      readable: page.readable,
      cut: bounded.cut,
    };
  } catch (error) {
    reply = { id: request.id, ok: false, message: (error as Error).message };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies ConversionReply);
