/**
 * Recently read PDFs, keyed by the SHA-256 of their bytes (and the page cap they were read with),
 * so a conversation that sends the same PDF every turn has it parsed once. Bounded by the bytes of
 * text it keeps: the least recently used entries go first, and an entry larger than the whole
 * budget is not kept. Failures that depend only on the document (encrypted, malformed, no text)
 * are kept too, as small entries; a timeout is not (it depends on the load).
 */
import type { PdfPagesOutcome } from "./extract-pdf-pages.js";

/** What an entry costs beyond its text: key, object headers, page array slots. */
const ENTRY_OVERHEAD_BYTES = 256;
const PAGE_OVERHEAD_BYTES = 16;

export interface PdfTextCache {
  get(key: string): PdfPagesOutcome | undefined;
  set(key: string, outcome: PdfPagesOutcome): void;
  readonly bytes: number;
  readonly size: number;
}

export function createPdfTextCache(maxBytes: number): PdfTextCache {
  // A Map iterates in insertion order; re-inserting on a hit makes it an LRU list.
  const entries = new Map<string, { outcome: PdfPagesOutcome; bytes: number }>();
  let totalBytes = 0;

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.outcome;
    },
    set(key, outcome) {
      const bytes = measureOutcome(outcome);
      const previous = entries.get(key);
      if (previous) {
        entries.delete(key);
        totalBytes -= previous.bytes;
      }
      if (bytes > maxBytes) return;
      for (const [oldestKey, oldest] of entries) {
        if (totalBytes + bytes <= maxBytes) break;
        entries.delete(oldestKey);
        totalBytes -= oldest.bytes;
      }
      entries.set(key, { outcome, bytes });
      totalBytes += bytes;
    },
    get bytes() {
      return totalBytes;
    },
    get size() {
      return entries.size;
    },
  };
}

function measureOutcome(outcome: PdfPagesOutcome): number {
  if (!outcome.ok) return ENTRY_OVERHEAD_BYTES + outcome.detail.length;
  let bytes = ENTRY_OVERHEAD_BYTES;
  for (const page of outcome.pages) bytes += Buffer.byteLength(page) + PAGE_OVERHEAD_BYTES;
  return bytes;
}
