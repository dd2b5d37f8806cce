/** Messages between the PDF worker pool and its threads. */
import type { PdfPagesOutcome, PdfPagesRequest } from "./extract-pdf-pages.js";

export interface PdfWorkerJob extends PdfPagesRequest {
  id: number;
}

export type PdfWorkerReply = { id: number; outcome: PdfPagesOutcome } | { ready: true };
