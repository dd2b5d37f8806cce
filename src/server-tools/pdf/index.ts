/**
 * The `pdf` tool's public surface. PDF.js (unpdf) is loaded only inside the worker threads, so
 * importing this module keeps it off the request thread.
 */

export {
  PDF_ENGINES,
  PDF_TOOL_DEFAULTS,
  type PdfEngine,
  type PdfToolConfigFile,
  type PdfToolSettings,
  pdfToolConfigSchema,
  resolvePdfToolSettings,
} from "../../config/server-tools/pdf-config.js";
export {
  createPdfTextExtractor,
  type PdfExtractOptions,
  type PdfExtractorStats,
  type PdfInput,
  type PdfTextExtractor,
} from "./create-pdf-text-extractor.js";
export { DEFAULT_PDF_FILENAME, formatPdfDocument, maxFormattedPdfBytes } from "./format-pdf-document.js";
export type { PdfExtraction, PdfFailure, PdfFailureReason, PdfText } from "./pdf-extraction.js";
export { type DecodedPdf, decodePdfBase64, hasPdfHeader } from "./read-pdf-bytes.js";
export {
  type PdfRequestOptions,
  type PdfRequestOptionsResult,
  resolvePdfRequestOptions,
  shouldExtractPdfText,
  toPdfGatewayError,
} from "./resolve-pdf-request-options.js";
