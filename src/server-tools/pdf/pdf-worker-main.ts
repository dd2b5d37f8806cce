/**
 * A worker thread that reads PDFs (pdf-worker-pool.ts): one job at a time, each a message with the
 * PDF's bytes (transferred, not copied) and its caps, answered with the pages' text or why not.
 * The pool stops the thread when a job passes its deadline, so nothing here needs a timer. PDF.js
 * is loaded at start, and a `ready` message says when it is.
 */
import { parentPort } from "node:worker_threads";
import { resolvePDFJSImport } from "unpdf";
import { extractPdfPages, type PdfPagesOutcome } from "./extract-pdf-pages.js";
import type { PdfWorkerJob, PdfWorkerReply } from "./pdf-worker-protocol.js";

const port = parentPort;
if (!port) throw new Error("pdf-worker-main runs as a worker thread");

port.on("message", async (job: PdfWorkerJob) => {
  let outcome: PdfPagesOutcome;
  try {
    outcome = await extractPdfPages(job);
  } catch (error) {
    outcome = { ok: false, reason: "malformed", detail: String((error as Error)?.message ?? error) };
  }
  port.postMessage({ id: job.id, outcome } satisfies PdfWorkerReply);
});

// Load PDF.js now rather than in the first job, and say so: the pool counts a thread as warm
// from this message on.
await resolvePDFJSImport();
port.postMessage({ ready: true } satisfies PdfWorkerReply);
