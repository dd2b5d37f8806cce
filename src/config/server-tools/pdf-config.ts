/**
 * Configuration of the `pdf` server tool (`server_tools.pdf` in the YAML file). Field names are
 * snake_case as in the file; `resolvePdfToolSettings` gives the runtime view.
 */
import { z } from "zod";
import { usdPriceSchema } from "./usd-price-schema.js";

export const PDF_ENGINES = ["native", "text"] as const;
export type PdfEngine = (typeof PDF_ENGINES)[number];

const MIB = 1024 * 1024;

export const PDF_TOOL_DEFAULTS = {
  engine: "native",
  maxPages: 100,
  maxFileBytes: 20 * MIB,
  maxTextBytes: 256 * 1024,
  timeoutMs: 15_000,
  pricePerPageMicroUsd: 0,
  cacheMaxBytes: 32 * MIB,
  maxWorkers: 2,
  workerMemoryMb: 512,
  workerIdleMs: 60_000,
} as const;

export const pdfToolConfigSchema = z.strictObject({
  /**
   * `native`: a model that reads PDFs gets the file as sent, any other model gets its text.
   * `text`: every model gets the text, even one that reads PDFs.
   */
  engine: z.enum(PDF_ENGINES).default(PDF_TOOL_DEFAULTS.engine),
  /** Pages read per document; later pages are left out and the text says so. */
  max_pages: z.int().min(1).max(10_000).default(PDF_TOOL_DEFAULTS.maxPages),
  /** Largest PDF accepted, in bytes; a larger one is refused before it is parsed. */
  max_file_bytes: z.int().min(1024).default(PDF_TOOL_DEFAULTS.maxFileBytes),
  /** Extracted text kept per document (UTF-8 bytes); the rest is cut and the text says so. */
  max_text_bytes: z.int().min(1024).default(PDF_TOOL_DEFAULTS.maxTextBytes),
  /** Deadline of one extraction, queueing included; past it the worker is stopped. */
  timeout_ms: z.int().min(100).max(600_000).default(PDF_TOOL_DEFAULTS.timeoutMs),
  /** Charged per page whose text reaches the model (USD); free by default. */
  price_per_page_usd: usdPriceSchema.default(PDF_TOOL_DEFAULTS.pricePerPageMicroUsd),
  /** Memory for extracted texts of recently seen PDFs (keyed by SHA-256); 0 turns the cache off. */
  cache_max_bytes: z.int().min(0).default(PDF_TOOL_DEFAULTS.cacheMaxBytes),
  /** Worker threads that parse PDFs at once; more documents wait (within their deadline). */
  max_workers: z.int().min(1).max(16).default(PDF_TOOL_DEFAULTS.maxWorkers),
  /** Heap limit of each worker thread; a document that needs more fails as `too_complex`. */
  worker_memory_mb: z.int().min(64).max(8192).default(PDF_TOOL_DEFAULTS.workerMemoryMb),
});

export type PdfToolConfigFile = z.infer<typeof pdfToolConfigSchema>;

/** Runtime view of the `pdf` tool's configuration; money in integer micro-USD. */
export interface PdfToolSettings {
  engine: PdfEngine;
  maxPages: number;
  maxFileBytes: number;
  maxTextBytes: number;
  timeoutMs: number;
  pricePerPageMicroUsd: number;
  cacheMaxBytes: number;
  maxWorkers: number;
  workerMemoryMb: number;
  /** An idle worker exits after this long (its memory goes back); a later PDF starts a new one. */
  workerIdleMs: number;
}

export function resolvePdfToolSettings(file: PdfToolConfigFile): PdfToolSettings {
  return {
    engine: file.engine,
    maxPages: file.max_pages,
    maxFileBytes: file.max_file_bytes,
    maxTextBytes: file.max_text_bytes,
    timeoutMs: file.timeout_ms,
    pricePerPageMicroUsd: file.price_per_page_usd,
    cacheMaxBytes: file.cache_max_bytes,
    maxWorkers: file.max_workers,
    workerMemoryMb: file.worker_memory_mb,
    workerIdleMs: PDF_TOOL_DEFAULTS.workerIdleMs,
  };
}
