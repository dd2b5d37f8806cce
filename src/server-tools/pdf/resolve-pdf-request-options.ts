/**
 * What a request may choose for its PDFs, read from the `pdf` activation's parameters (the extra
 * fields of `plugins:[{id:"pdf", …}]` or of a `pdf` tool entry), and how a failure reaches the
 * caller when the PDF was sent as a file part (outside the tool loop).
 *
 * Accepted: `engine: "native" | "text"` (also OpenRouter's `pdf: {engine}` nesting and its
 * `pdf-text` spelling), `max_pages` (may lower the configured cap, never raise it). Other fields
 * are left to other readers.
 */
import { GatewayError } from "../../errors/gateway-error.js";
import { PDF_ENGINES, type PdfEngine, type PdfToolSettings } from "./pdf-config.js";
import type { PdfFailure } from "./pdf-extraction.js";

export interface PdfRequestOptions {
  engine: PdfEngine;
  maxPages: number;
}

export type PdfRequestOptionsResult =
  | { ok: true; options: PdfRequestOptions }
  /** `param` is relative to the activation (`engine`, `pdf.engine`, `max_pages`). */
  | { ok: false; param: string; message: string };

const ENGINE_ALIASES: Record<string, PdfEngine> = { native: "native", text: "text", "pdf-text": "text" };

export function resolvePdfRequestOptions(
  parameters: Record<string, unknown> | undefined,
  settings: Pick<PdfToolSettings, "engine" | "maxPages">,
): PdfRequestOptionsResult {
  const options: PdfRequestOptions = { engine: settings.engine, maxPages: settings.maxPages };
  if (!parameters) return { ok: true, options };

  const nested = parameters.pdf;
  if (nested !== undefined && (typeof nested !== "object" || nested === null || Array.isArray(nested))) {
    return { ok: false, param: "pdf", message: 'pdf must be an object such as {"engine":"text"}' };
  }
  const engineSources: Array<[string, unknown]> = [
    ["engine", parameters.engine],
    ["pdf.engine", (nested as Record<string, unknown> | undefined)?.engine],
  ];
  for (const [param, value] of engineSources) {
    if (value === undefined || value === null) continue;
    const engine = typeof value === "string" ? ENGINE_ALIASES[value] : undefined;
    if (!engine) {
      return {
        ok: false,
        param,
        message: `${param} must be one of ${PDF_ENGINES.join(", ")} (this gateway has no OCR engine); got ${JSON.stringify(value)}`,
      };
    }
    options.engine = engine;
  }

  const maxPages = parameters.max_pages;
  if (maxPages !== undefined && maxPages !== null) {
    if (typeof maxPages !== "number" || !Number.isInteger(maxPages) || maxPages < 1) {
      return { ok: false, param: "max_pages", message: "max_pages must be a positive integer" };
    }
    if (maxPages > settings.maxPages) {
      return {
        ok: false,
        param: "max_pages",
        message: `max_pages must be at most ${settings.maxPages} (this gateway's page cap)`,
      };
    }
    options.maxPages = maxPages;
  }
  return { ok: true, options };
}

/**
 * Whether a PDF goes to the model as text: always with the `text` engine; with `native` only when
 * the model cannot read PDFs itself.
 */
export function shouldExtractPdfText(engine: PdfEngine, modelReadsPdf: boolean): boolean {
  return engine === "text" || !modelReadsPdf;
}

/**
 * The caller-facing error for a PDF that could not be turned into text before the model call:
 * `invalid_request` naming the part (`param`), with the failure's sentence; a failure inside the
 * gateway is an `internal_error`. Inside the tool loop, give the model `failure.message` instead.
 */
export function toPdfGatewayError(failure: PdfFailure, param: string): GatewayError {
  if (failure.reason === "internal") {
    return new GatewayError("internal_error", "Internal error while reading a PDF");
  }
  return GatewayError.invalidRequest(failure.message, param);
}
