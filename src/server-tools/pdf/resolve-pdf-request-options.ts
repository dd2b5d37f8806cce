/**
 * What a request may choose for its PDFs, read from the `pdf` activation's parameters (the extra
 * fields of `plugins:[{id:"pdf", …}]` or of a `pdf` tool entry), and how a failure reaches the
 * caller when the PDF was sent as a file part (outside the tool loop).
 *
 * Accepted: `engine: "native" | "text"` (also OpenRouter's `pdf: {engine}` nesting and its
 * `pdf-text` spelling), `max_pages` and `max_file_bytes` (each may lower the configured cap, never
 * raise it). Other fields are left to other readers.
 */

import { PDF_ENGINES, type PdfEngine, type PdfToolSettings } from "../../config/server-tools/pdf-config.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { PdfFailure } from "./pdf-extraction.js";

export interface PdfRequestOptions {
  engine: PdfEngine;
  maxPages: number;
  maxFileBytes: number;
}

export type PdfRequestOptionsResult =
  | { ok: true; options: PdfRequestOptions }
  /** `param` is relative to the activation (`engine`, `pdf.engine`, `max_pages`). */
  | { ok: false; param: string; message: string };

const ENGINE_ALIASES: Record<string, PdfEngine> = { native: "native", text: "text", "pdf-text": "text" };

export function resolvePdfRequestOptions(
  parameters: Record<string, unknown> | undefined,
  settings: Pick<PdfToolSettings, "engine" | "maxPages" | "maxFileBytes">,
): PdfRequestOptionsResult {
  const options: PdfRequestOptions = {
    engine: settings.engine,
    maxPages: settings.maxPages,
    maxFileBytes: settings.maxFileBytes,
  };
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

  const caps: Array<["max_pages" | "max_file_bytes", "maxPages" | "maxFileBytes", string]> = [
    ["max_pages", "maxPages", "page cap"],
    ["max_file_bytes", "maxFileBytes", "byte cap"],
  ];
  for (const [param, field, what] of caps) {
    const value = parameters[param];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      return { ok: false, param, message: `${param} must be a positive integer` };
    }
    if (value > settings[field]) {
      return {
        ok: false,
        param,
        message: `${param} must be at most ${settings[field]} (this gateway's ${what})`,
      };
    }
    options[field] = value;
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
 * `invalid_request` naming the part (`param`, and at the start of the message, since the Messages
 * envelope has no `param`), with the failure's sentence; a failure inside the gateway is an
 * `internal_error`. Inside the tool loop, give the model `failure.message` instead.
 */
export function toPdfGatewayError(failure: PdfFailure, param: string): GatewayError {
  if (failure.reason === "internal") {
    return new GatewayError("internal_error", "Internal error while reading a PDF");
  }
  return GatewayError.invalidRequest(`${param}: ${failure.message}`, param);
}
