/**
 * The text of a PDF's first pages, with unpdf (PDF.js). Runs inside a worker thread
 * (pdf-worker-main.ts): PDF.js parses synchronously between promise steps and never yields to the
 * event loop, so on the request thread one large page would stall every other request.
 *
 * Bounded work: pages after `maxPages` are never parsed, and parsing stops at the page where the
 * text reaches `maxTextBytes`.
 */
import { getDocumentProxy } from "unpdf";

export interface PdfPagesRequest {
  bytes: Uint8Array;
  maxPages: number;
  maxTextBytes: number;
}

export type PdfPagesOutcome =
  | { ok: true; totalPages: number; pages: string[]; textCut: boolean; unreadablePages: number }
  | { ok: false; reason: "encrypted" | "malformed"; detail: string };

interface TextContentItem {
  str?: string;
  hasEOL?: boolean;
}

// PDF.js VerbosityLevel.ERRORS: no "Warning: …" lines on stdout for every odd file.
const VERBOSITY_ERRORS = 0;

export async function extractPdfPages(request: PdfPagesRequest): Promise<PdfPagesOutcome> {
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // PDF.js refuses a Node Buffer; a plain view of the same memory is accepted.
    const bytes = Buffer.isBuffer(request.bytes)
      ? new Uint8Array(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength)
      : request.bytes;
    document = await getDocumentProxy(bytes, {
      verbosity: VERBOSITY_ERRORS,
      isEvalSupported: false,
      disableFontFace: true,
      // Text needs no embedded font programs turned into browser fonts, nor system fonts.
      useSystemFonts: false,
    });
  } catch (error) {
    return classifyOpenError(error);
  }
  try {
    const pages: string[] = [];
    let textBytes = 0;
    let textCut = false;
    let unreadablePages = 0;
    const lastPage = Math.min(document.numPages, request.maxPages);
    for (let pageNumber = 1; pageNumber <= lastPage; pageNumber++) {
      let text: string;
      try {
        const page = await document.getPage(pageNumber);
        const content = await page.getTextContent();
        text = joinTextItems(content.items as TextContentItem[]);
        page.cleanup();
      } catch {
        unreadablePages++;
        pages.push("");
        continue;
      }
      const size = Buffer.byteLength(text);
      if (textBytes + size > request.maxTextBytes) {
        pages.push(cutToUtf8Bytes(text, request.maxTextBytes - textBytes));
        textCut = true;
        break;
      }
      textBytes += size;
      pages.push(text);
    }
    if (unreadablePages > 0 && unreadablePages === pages.length) {
      return { ok: false, reason: "malformed", detail: "no page could be read" };
    }
    return { ok: true, totalPages: document.numPages, pages, textCut, unreadablePages };
  } catch (error) {
    return classifyOpenError(error);
  } finally {
    await document.destroy().catch(() => undefined);
  }
}

/**
 * Items in reading order; an item ending a line is followed by a newline. Runs of spaces and tabs
 * collapse to one, lines are trimmed, blank-line runs shrink to one blank line and control
 * characters other than newline go (all linear passes).
 */
function joinTextItems(items: TextContentItem[]): string {
  let raw = "";
  for (const item of items) {
    if (typeof item.str !== "string") continue;
    raw += item.str;
    if (item.hasEOL) raw += "\n";
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const withoutControls = raw.replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, " ");
  return withoutControls
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes` (never splits a character). */
export function cutToUtf8Bytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  const encoded = Buffer.from(text, "utf8");
  if (encoded.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString("utf8");
}

function classifyOpenError(error: unknown): PdfPagesOutcome {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "PasswordException") {
    return { ok: false, reason: "encrypted", detail: "a password is needed to open it" };
  }
  const message = (error as { message?: unknown } | null)?.message;
  return {
    ok: false,
    reason: "malformed",
    detail: typeof message === "string" && message.length > 0 ? message.slice(0, 200) : "unreadable",
  };
}
