/** What reading a PDF gives: the model-facing text, or a typed failure that says why not. */

export type PdfFailureReason =
  /** The bytes do not start like a PDF (no `%PDF-` header near the start). */
  | "not_pdf"
  /** Larger than the configured byte cap; refused before parsing. */
  | "too_large"
  /** Needs a password to open. */
  | "encrypted"
  /** Damaged, truncated or otherwise unreadable as a PDF. */
  | "malformed"
  /** Opened, but none of the pages read has any text (a scan or images only). */
  | "no_text_layer"
  /** Did not finish within the deadline (waiting for a worker included). */
  | "timeout"
  /** Needed more memory than the worker's limit. */
  | "too_complex"
  /** The caller's signal aborted the extraction. */
  | "aborted"
  /** The extraction worker failed for a reason unrelated to the document. */
  | "internal";

export interface PdfFailure {
  reason: PdfFailureReason;
  /** One sentence for the caller or the model, naming the file. */
  message: string;
}

export interface PdfText {
  /**
   * The document as the model reads it:
   * `<file name="x.pdf" pages="12">`, then `--- page N ---` and the page's text for each page
   * read, a bracketed note when pages or text were left out, and `</file>`.
   */
  text: string;
  /** Pages the document has. */
  totalPages: number;
  /** Pages whose text is in `text` (the first ones, in order). */
  pagesIncluded: number;
  /** Pages were left out by the page cap. */
  pagesCut: boolean;
  /** The text of the last page included was cut by the text cap. */
  textCut: boolean;
  /** `pagesIncluded` × the configured price per page. */
  costMicroUsd: number;
  /** Served from the cache: this call parsed nothing. */
  cached: boolean;
  /** SHA-256 of the PDF bytes (hex), the cache key. */
  sha256: string;
}

export type PdfExtraction = ({ ok: true } & PdfText) | { ok: false; failure: PdfFailure };
