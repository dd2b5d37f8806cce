/**
 * Bounds of web_fetch's HTML conversion: the YAML block `server_tools.web_fetch.html_conversion`
 * and its runtime view. The pool of worker threads (html-conversion-pool.ts) is sized to the
 * machine; each page is cut to a size and a tree shape before it is parsed and given a deadline;
 * one key's pages cannot take every worker or queue without end. docs/server-tools.md lists them.
 */
import { availableParallelism } from "node:os";
import { z } from "zod";

export const HTML_CONVERSION_DEFAULTS = {
  /** Fewest and most workers the default size (the cores this process may use) is held to. */
  minDefaultWorkers: 2,
  maxDefaultWorkers: 8,
  timeoutMs: 10_000,
  maxBytes: 2 * 1024 * 1024,
  maxDepth: 128,
  maxElements: 20_000,
  perKeyQueued: 16,
  maxHeapMb: 512,
} as const;

export const htmlConversionConfigSchema = z.strictObject({
  /** Worker threads converting at once; default: the cores this process may use, from 2 to 8. */
  workers: z.int().min(1).max(64).optional(),
  /** A conversion running longer is stopped (its worker terminated and replaced). */
  timeout_ms: z.int().min(100).max(120_000).default(HTML_CONVERSION_DEFAULTS.timeoutMs),
  /** Bytes of a page's HTML that are converted; the rest is not read (the result says so). */
  max_bytes: z
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(HTML_CONVERSION_DEFAULTS.maxBytes),
  /** Elements open at once in the parsed page; deeper tags are dropped, their text kept. */
  max_depth: z.int().min(8).max(1024).default(HTML_CONVERSION_DEFAULTS.maxDepth),
  /** Elements of a page that are parsed; the page is cut before the next one. */
  max_elements: z.int().min(100).max(1_000_000).default(HTML_CONVERSION_DEFAULTS.maxElements),
  /** Conversions of one key running at once; default: one fewer than the workers (at least 1). */
  per_key_running: z.int().min(1).max(64).optional(),
  /** Pages of one key waiting for a worker; one more is refused at once. */
  per_key_queued: z.int().min(0).max(1024).default(HTML_CONVERSION_DEFAULTS.perKeyQueued),
  /** Old-generation heap cap of each worker, MiB. */
  max_heap_mb: z.int().min(64).max(8192).default(HTML_CONVERSION_DEFAULTS.maxHeapMb),
});

export type HtmlConversionConfigFile = z.infer<typeof htmlConversionConfigSchema>;

export interface HtmlConversionSettings {
  workers: number;
  timeoutMs: number;
  maxBytes: number;
  maxDepth: number;
  maxElements: number;
  perKeyRunning: number;
  perKeyQueued: number;
  maxHeapMb: number;
}

/** The cores this process may use, held to 2..8: two let one key's page never hold every worker. */
export function defaultHtmlWorkers(): number {
  return Math.min(
    HTML_CONVERSION_DEFAULTS.maxDefaultWorkers,
    Math.max(HTML_CONVERSION_DEFAULTS.minDefaultWorkers, availableParallelism()),
  );
}

export function toHtmlConversionSettings(file: HtmlConversionConfigFile): HtmlConversionSettings {
  const workers = file.workers ?? defaultHtmlWorkers();
  return {
    workers,
    timeoutMs: file.timeout_ms,
    maxBytes: file.max_bytes,
    maxDepth: file.max_depth,
    maxElements: file.max_elements,
    perKeyRunning: Math.min(workers, file.per_key_running ?? Math.max(1, workers - 1)),
    perKeyQueued: file.per_key_queued,
    maxHeapMb: file.max_heap_mb,
  };
}

export function defaultHtmlConversionSettings(): HtmlConversionSettings {
  return toHtmlConversionSettings(htmlConversionConfigSchema.parse({}));
}
