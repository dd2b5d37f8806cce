/**
 * The `pdf` tool's text engine: PDF bytes in, the model-facing text (or a typed failure) out.
 *
 * Order of work, cheapest first: byte cap, `%PDF-` header, SHA-256 cache lookup (a concurrent
 * request for the same bytes waits for the parse already running), then a worker thread
 * (pdf-worker-pool.ts) under the deadline. Never rejects: every failure is a `PdfFailure` with a
 * reason and a sentence naming the file. URLs are not fetched here; the caller fetches through
 * web_fetch's checked fetcher and hands over the bytes.
 *
 * Cost: pages whose text reaches the model × the price per page, on every call, cache hit or
 * not, so the same request costs the same on whichever instance serves it.
 */
import { createHash } from "node:crypto";
import type { PdfToolSettings } from "../../config/server-tools/pdf-config.js";
import { countPdfPages } from "../../metering/count-pdf-pages.js";
import type { PdfPagesOutcome } from "./extract-pdf-pages.js";
import { cleanFilename, formatPdfDocument } from "./format-pdf-document.js";
import type { PdfExtraction, PdfFailure } from "./pdf-extraction.js";
import { createPdfTextCache } from "./pdf-text-cache.js";
import { createPdfWorkerPool, type PdfPoolOutcome, type PdfWorkerPool } from "./pdf-worker-pool.js";
import { hasPdfHeader } from "./read-pdf-bytes.js";

export interface PdfInput {
  bytes: Uint8Array;
  /** Shown to the model in the wrapper; `document.pdf` when absent. */
  filename?: string;
}

export interface PdfExtractOptions {
  /** Aborting ends the extraction (its worker is stopped) with reason `aborted`. */
  signal?: AbortSignal;
  /** A lower page cap for this call (a request's plugin option); never above the configured one. */
  maxPages?: number;
  /** A lower byte cap for this call (a request's plugin option); never above the configured one. */
  maxFileBytes?: number;
}

export interface PdfExtractorStats {
  /** Documents handed to a worker (cache misses). */
  parses: number;
  cacheHits: number;
  cacheEntries: number;
  cacheBytes: number;
  threads: number;
}

export interface PdfTextExtractor {
  readonly settings: PdfToolSettings;
  extractText(input: PdfInput, options?: PdfExtractOptions): Promise<PdfExtraction>;
  /**
   * The most reading these bytes can cost (for a reservation): the page estimate, or the page
   * cap when it is unknown or larger, × the price. Without bytes (a URL not fetched yet): the cap.
   */
  estimateMaxCostMicroUsd(bytes?: Uint8Array, options?: { maxPages?: number }): number;
  /** Starts a worker thread and loads PDF.js ahead of the first PDF (see PdfWorkerPool.prewarm). */
  prewarm(): Promise<boolean>;
  stats(): PdfExtractorStats;
  /** Stops the worker threads; later calls fail as `internal`. */
  close(): Promise<void>;
}

export function createPdfTextExtractor(
  settings: PdfToolSettings,
  dependencies: { pool?: PdfWorkerPool } = {},
): PdfTextExtractor {
  const pool =
    dependencies.pool ??
    createPdfWorkerPool({
      maxWorkers: settings.maxWorkers,
      workerMemoryMb: settings.workerMemoryMb,
      idleMs: settings.workerIdleMs,
    });
  const cache = createPdfTextCache(settings.cacheMaxBytes);
  const inFlight = new Map<string, Promise<PdfPoolOutcome>>();
  let parses = 0;
  let cacheHits = 0;

  const effectivePageCap = (requested: number | undefined) => lowerCap(requested, settings.maxPages);

  async function extractText(input: PdfInput, options: PdfExtractOptions = {}): Promise<PdfExtraction> {
    const filename = cleanFilename(input.filename);
    const fail = (reason: PdfFailure["reason"], message: string): PdfExtraction => ({
      ok: false,
      failure: { reason, message },
    });
    const maxFileBytes = lowerCap(options.maxFileBytes, settings.maxFileBytes);
    if (input.bytes.byteLength > maxFileBytes) {
      return fail(
        "too_large",
        `"${filename}" is ${formatBytes(input.bytes.byteLength)}; PDFs are accepted up to ${formatBytes(maxFileBytes)}.`,
      );
    }
    if (!hasPdfHeader(input.bytes)) {
      return fail("not_pdf", `"${filename}" is not a PDF (it has no %PDF- header).`);
    }
    const maxPages = effectivePageCap(options.maxPages);
    const sha256 = createHash("sha256").update(input.bytes).digest("hex");
    const key = `${sha256}:${maxPages}`;

    let outcome: PdfPoolOutcome | undefined = cache.get(key);
    let cached = outcome !== undefined;
    if (outcome) {
      cacheHits++;
    } else {
      let running = inFlight.get(key);
      if (running) {
        cached = true;
        cacheHits++;
      } else {
        parses++;
        running = pool.run(
          { bytes: input.bytes, maxPages, maxTextBytes: settings.maxTextBytes },
          { timeoutMs: settings.timeoutMs, signal: options.signal },
        );
        inFlight.set(key, running);
        void running.then((result) => {
          inFlight.delete(key);
          if (isCacheable(result)) cache.set(key, result);
        });
      }
      // A caller that joined another's parse still stops waiting at its own abort.
      outcome = cached ? await waitUnlessAborted(running, options.signal) : await running;
      // A parse that another caller's signal aborted is not this caller's answer: read it again.
      if (!outcome.ok && outcome.reason === "aborted" && !options.signal?.aborted) {
        return extractText(input, options);
      }
    }

    if (!outcome.ok) return { ok: false, failure: describeFailure(outcome, filename, settings) };
    if (outcome.pages.every((page) => page === "")) {
      return fail(
        "no_text_layer",
        `"${filename}" has no text layer in ${outcome.pages.length === 1 ? "its first page" : `the ${outcome.pages.length} pages read`} (a scanned or image-only PDF); send it to a model that reads PDFs, or send its text.`,
      );
    }
    const pagesIncluded = outcome.pages.length;
    return {
      ok: true,
      text: formatPdfDocument({
        filename,
        totalPages: outcome.totalPages,
        pages: outcome.pages,
        textCut: outcome.textCut,
        maxPages,
        maxTextBytes: settings.maxTextBytes,
      }),
      totalPages: outcome.totalPages,
      pagesIncluded,
      pagesCut: pagesIncluded < outcome.totalPages,
      textCut: outcome.textCut,
      costMicroUsd: pagesIncluded * settings.pricePerPageMicroUsd,
      cached,
      sha256,
    };
  }

  return {
    settings,
    extractText,
    estimateMaxCostMicroUsd(bytes, options = {}) {
      const cap = effectivePageCap(options.maxPages);
      const estimate =
        bytes === undefined
          ? undefined
          : countPdfPages(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return Math.min(estimate ?? cap, cap) * settings.pricePerPageMicroUsd;
    },
    prewarm: () => pool.prewarm(),
    stats: () => ({
      parses,
      cacheHits,
      cacheEntries: cache.size,
      cacheBytes: cache.bytes,
      threads: pool.threadCount,
    }),
    close: () => pool.close(),
  };
}

/** A caller's cap applies when it is a positive integer below the configured one. */
function lowerCap(requested: number | undefined, configured: number): number {
  if (requested === undefined || !Number.isInteger(requested) || requested < 1) return configured;
  return Math.min(requested, configured);
}

function waitUnlessAborted(running: Promise<PdfPoolOutcome>, signal?: AbortSignal): Promise<PdfPoolOutcome> {
  if (!signal) return running;
  const aborted: PdfPoolOutcome = { ok: false, reason: "aborted", detail: "cancelled" };
  if (signal.aborted) return Promise.resolve(aborted);
  return new Promise((resolve) => {
    const onAbort = () => resolve(aborted);
    signal.addEventListener("abort", onAbort, { once: true });
    void running.then((outcome) => {
      signal.removeEventListener("abort", onAbort);
      resolve(outcome);
    });
  });
}

/** Outcomes that depend only on the bytes (not on load, deadline or a caller's abort). */
function isCacheable(outcome: PdfPoolOutcome): outcome is PdfPagesOutcome {
  return outcome.ok || outcome.reason === "encrypted" || outcome.reason === "malformed";
}

function describeFailure(
  outcome: Extract<PdfPoolOutcome, { ok: false }>,
  filename: string,
  settings: PdfToolSettings,
): PdfFailure {
  switch (outcome.reason) {
    case "encrypted":
      return {
        reason: "encrypted",
        message: `"${filename}" is encrypted and needs a password; send it without the password protection.`,
      };
    case "malformed":
      return {
        reason: "malformed",
        message: `"${filename}" could not be read as a PDF (damaged or truncated file).`,
      };
    case "timeout":
      return {
        reason: "timeout",
        message: `Reading "${filename}" took longer than ${settings.timeoutMs} ms and was stopped.`,
      };
    case "too_complex":
      return {
        reason: "too_complex",
        message: `"${filename}" needs more memory to read than the gateway allows (${settings.workerMemoryMb} MB).`,
      };
    case "aborted":
      return { reason: "aborted", message: `Reading "${filename}" was cancelled.` };
    case "internal":
      return { reason: "internal", message: `Reading "${filename}" failed inside the gateway.` };
  }
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1 ? `${mib.toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}
