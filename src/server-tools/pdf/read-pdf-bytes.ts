/**
 * Cheap checks and decoding that happen before a PDF goes to a worker: the `%PDF-` header and the
 * byte cap, and base64 (a `file_data` data URL, a `document` block's base64 source) decoded only
 * when its length allows a file under the cap.
 */

const PDF_HEADER = Buffer.from("%PDF-");
/** Readers accept the header anywhere in the first 1024 bytes (leading junk from mail gateways). */
const HEADER_SEARCH_BYTES = 1024;

export function hasPdfHeader(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, HEADER_SEARCH_BYTES));
  return head.indexOf(PDF_HEADER) >= 0;
}

export type DecodedPdf = { ok: true; bytes: Buffer } | { ok: false; sizeBytes: number };

/**
 * Decodes base64 (standard or URL alphabet) unless the file it holds would exceed `maxFileBytes`;
 * then `ok: false` with the size the file would have, and nothing is allocated.
 */
export function decodePdfBase64(data: string, maxFileBytes: number): DecodedPdf {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const sizeBytes = Math.floor((data.length * 3) / 4) - padding;
  if (sizeBytes > maxFileBytes) return { ok: false, sizeBytes };
  const bytes = Buffer.from(data, "base64");
  return bytes.length > maxFileBytes ? { ok: false, sizeBytes: bytes.length } : { ok: true, bytes };
}
