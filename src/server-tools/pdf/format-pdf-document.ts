/**
 * The layout a model reads a PDF in:
 *
 *     <file name="report.pdf" pages="12">
 *     --- page 1 ---
 *     text of page 1
 *
 *     --- page 2 ---
 *     [no text on this page]
 *     …
 *     [pages 101-500 not included: at most 100 pages are read]
 *     </file>
 *
 * The name is escaped as an XML attribute, and a `</file` inside the text is defused so a
 * document cannot close its own wrapper and pose as the user.
 */

export interface PdfDocumentLayout {
  filename: string;
  totalPages: number;
  /** Texts of the first pages, in order. */
  pages: readonly string[];
  /** The last page's text was cut by the text cap. */
  textCut: boolean;
  /** The page cap in force (for the note on left-out pages). */
  maxPages: number;
  /** The text cap in force (for the note on cut text). */
  maxTextBytes: number;
}

export const DEFAULT_PDF_FILENAME = "document.pdf";
const MAX_NAME_LENGTH = 200;
/** The wrapper's lines and the note at most: the name (every character escaped), counts, `</file>`. */
const MAX_WRAPPER_BYTES = MAX_NAME_LENGTH * 6 + 512;
/** A page's marker and separator, or the line that says it has no text. */
const MAX_PAGE_OVERHEAD_BYTES = 48;

/**
 * The most UTF-8 bytes `formatPdfDocument` gives for these caps, whatever the document: what a
 * reservation counts for a PDF sent as text (a token is at least a byte). Defusing `</file` adds
 * one byte per six of text.
 */
export function maxFormattedPdfBytes(maxPages: number, maxTextBytes: number): number {
  return Math.ceil((maxTextBytes * 7) / 6) + maxPages * MAX_PAGE_OVERHEAD_BYTES + MAX_WRAPPER_BYTES;
}

export function formatPdfDocument(layout: PdfDocumentLayout): string {
  const parts: string[] = [
    `<file name="${escapeAttribute(cleanFilename(layout.filename))}" pages="${layout.totalPages}">`,
  ];
  layout.pages.forEach((text, index) => {
    if (index > 0) parts.push("");
    parts.push(`--- page ${index + 1} ---`);
    parts.push(text === "" ? "[no text on this page]" : defuseClosingTag(text));
  });
  const included = layout.pages.length;
  if (layout.textCut) {
    const rest =
      included < layout.totalPages ? `; ${describeRange(included + 1, layout.totalPages)} not included` : "";
    parts.push(`[text cut here: at most ${layout.maxTextBytes} bytes of text are read${rest}]`);
  } else if (included < layout.totalPages) {
    parts.push(
      `[${describeRange(included + 1, layout.totalPages)} not included: at most ${countPages(layout.maxPages)} read]`,
    );
  }
  parts.push("</file>");
  return parts.join("\n");
}

/** A display name: control characters out, bounded length, a default when empty. */
export function cleanFilename(filename: string | undefined): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const cleaned = (filename ?? "").replace(/[\u0000-\u001F\u007F]/g, " ").trim();
  if (cleaned === "") return DEFAULT_PDF_FILENAME;
  return cleaned.length > MAX_NAME_LENGTH ? `${cleaned.slice(0, MAX_NAME_LENGTH)}…` : cleaned;
}

function describeRange(first: number, last: number): string {
  return first === last ? `page ${first}` : `pages ${first}-${last}`;
}

function countPages(count: number): string {
  return count === 1 ? "1 page is" : `${count} pages are`;
}

function escapeAttribute(value: string): string {
  return value.replace(/[&<>"]/g, (character) => ATTRIBUTE_ESCAPES[character]);
}

const ATTRIBUTE_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

function defuseClosingTag(text: string): string {
  return text.replace(/<\/file/gi, "<\\/file");
}
