/**
 * A linear pass over a page's HTML before it is parsed, bounding the tree the parser will build:
 * its nesting depth and its number of elements. The parser (htmlparser2 under linkedom) keeps its
 * open elements in an array it shifts and searches on every tag, and Readability walks ancestors
 * and subtrees, so a page of a few megabytes of nested `<div>` costs them time that grows far
 * faster than the page. After this pass they see at most `maxDepth` open elements and
 * `maxElements` elements, whatever the page.
 *
 * - Deeper than `maxDepth`: the start tag and its end tag are dropped, the text inside is kept.
 * - Past `maxElements`: the page is cut before that element (`cut`).
 * - Dropped too, as nothing in them is worth text: comments, processing instructions, declarations
 *   other than `<!doctype>`, and raw-text elements (`<script>`, `<style>`, `<textarea>`, `<xmp>`),
 *   except JSON-LD scripts (Readability reads a page's metadata there) and `<title>`, which are
 *   written again with their text made inert. A tag left open at the end of the input (a page cut
 *   mid-tag) is dropped, as an HTML parser drops it.
 *
 * The tags are read as htmlparser2's tokenizer reads them, and the depth counted as its parser
 * builds the tree of the text returned: void elements open nothing, a start tag closes the
 * elements it implies closed (`<p>` an open `<p>`, `<li>` an open `<li>`), a self-closing tag
 * inside `<svg>` or `<math>` closes itself, and an end tag closes up to the nearest open element
 * of its name. Anything the tokenizer could read otherwise than this pass (a raw-text element's
 * end, a comment's) is not in the returned text. Every tag costs a bounded amount of work, so the
 * pass is linear in the page.
 */

import {
  FOREIGN_CONTEXT,
  HTML_INTEGRATION,
  IMPLIES_CLOSE,
  RAW_TEXT_END,
  VOID_ELEMENTS,
} from "./html-tree-rules.js";
import {
  isAsciiLetter,
  readEndTag,
  readStartTag,
  type StartTag,
  skipMarkupDeclaration,
} from "./read-html-tag.js";

export interface HtmlStructureBounds {
  /** Most elements open at once in the returned HTML. */
  maxDepth: number;
  /** Most elements in the returned HTML; the page is cut before the next one. */
  maxElements: number;
}

export interface BoundedHtml {
  html: string;
  /** Whether the page was cut at `maxElements` (the rest was not read). */
  cut: boolean;
  /** Start tags dropped because they were deeper than `maxDepth`. */
  flattened: number;
}

const JSON_LD_TYPE = /\btype\s*=\s*["']?application\/ld\+json/i;

/** A stack of element names that also counts each name, so a search for an absent one is O(1). */
class NameStack {
  private readonly names: string[] = [];
  private readonly counts = new Map<string, number>();

  get length(): number {
    return this.names.length;
  }

  push(name: string): void {
    this.names.push(name);
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  popMany(count: number): void {
    for (let index = 0; index < count; index++) {
      const name = this.names.pop();
      if (name === undefined) return;
      const left = (this.counts.get(name) ?? 1) - 1;
      if (left === 0) this.counts.delete(name);
      else this.counts.set(name, left);
    }
  }

  /** Entries from the top down to the nearest `name`, searched among the top `within`; -1 if none. */
  depthOf(name: string, within: number): number {
    if (!this.counts.has(name)) return -1;
    const last = this.names.length - 1;
    for (let index = last; index >= 0 && last - index < within; index--) {
      if (this.names[index] === name) return last - index + 1;
    }
    return -1;
  }

  /** How many elements from the top `closing` closes, stopping at the first it does not. */
  impliedCloses(closing: ReadonlySet<string> | undefined): number {
    if (closing === undefined) return 0;
    let count = 0;
    for (let index = this.names.length - 1; index >= 0 && closing.has(this.names[index]); index--) count++;
    return count;
  }

  clear(): void {
    this.names.length = 0;
    this.counts.clear();
  }
}

export function boundHtmlStructure(html: string, bounds: HtmlStructureBounds): BoundedHtml {
  const maxDepth = Math.max(1, bounds.maxDepth);
  // The elements open in the returned HTML, and those opened deeper than maxDepth (dropped).
  const kept = new NameStack();
  const dropped = new NameStack();
  // htmlparser2's foreign-context stack, of the returned HTML (top last).
  const foreign: boolean[] = [];
  const parts: string[] = [];
  let copyFrom = 0;
  let elements = 0;
  let flattened = 0;
  let cut = false;
  let end = html.length;

  /** Leaves [from, to) out of the result, with `replacement` in its place. */
  const replace = (from: number, to: number, replacement = "") => {
    if (from > copyFrom) parts.push(html.slice(copyFrom, from));
    if (replacement !== "") parts.push(replacement);
    copyFrom = to;
  };

  let index = html.indexOf("<");
  scan: while (index !== -1) {
    const next = html.charCodeAt(index + 1);
    if (isAsciiLetter(next)) {
      const tag = readStartTag(html, index + 1);
      if (tag === undefined) {
        end = index;
        break;
      }
      const name = html.slice(index + 1, tag.nameEnd).toLowerCase();
      const raw = tag.selfClosing ? undefined : RAW_TEXT_END[name];
      let elementEnd = tag.end;
      let rawContentEnd = tag.end;
      if (raw !== undefined) {
        raw.lastIndex = tag.end;
        const close = raw.exec(html);
        rawContentEnd = close === null ? html.length : close.index;
        const closeEnd = close === null ? -1 : html.indexOf(">", close.index);
        elementEnd = closeEnd === -1 ? html.length : closeEnd + 1;
      }
      const closing = IMPLIES_CLOSE.get(name);
      const isVoid = VOID_ELEMENTS.has(name);
      // Where the parser of the returned HTML puts this element: under the kept elements, after
      // those it implies closed. Inside a dropped region a non-void element opens nothing there.
      const implied = dropped.length === 0 || isVoid ? kept.impliedCloses(closing) : 0;
      const fits = isVoid || (dropped.length === 0 && kept.length - implied < maxDepth);
      const rawReplacement = raw === undefined ? "" : rewriteRawText(name, html, tag, rawContentEnd);
      if (!fits || (raw !== undefined && rawReplacement === "")) {
        if (!fits) {
          dropped.popMany(dropped.impliedCloses(closing));
          if (raw === undefined) dropped.push(name);
          flattened++;
        }
        replace(index, elementEnd);
        index = html.indexOf("<", elementEnd);
        continue;
      }
      if (elements >= bounds.maxElements) {
        cut = true;
        end = index;
        break;
      }
      elements++;
      kept.popMany(implied);
      if (raw !== undefined) {
        replace(index, elementEnd, rawReplacement);
      } else if (!isVoid) {
        if (FOREIGN_CONTEXT.has(name)) foreign.push(true);
        else if (HTML_INTEGRATION.has(name)) foreign.push(false);
        // A self-closing tag closes itself only in a foreign context.
        if (!(tag.selfClosing && foreign[foreign.length - 1] === true)) kept.push(name);
      }
      index = html.indexOf("<", elementEnd);
      continue;
    }
    switch (next) {
      case 0x2f /* / */:
        {
          const tag = readEndTag(html, index);
          if (tag === undefined) {
            end = index;
            break scan;
          }
          if (tag.nameEnd === -1) {
            // `</>` and `</3…>`: no element closes; nothing worth keeping.
            replace(index, tag.end);
            index = html.indexOf("<", tag.end);
            continue scan;
          }
          const name = html.slice(tag.nameStart, tag.nameEnd).toLowerCase();
          if (dropped.length > 0) {
            const inDropped = dropped.depthOf(name, maxDepth);
            const inKept = inDropped === -1 ? kept.depthOf(name, maxDepth) : -1;
            if (inKept === -1) {
              dropped.popMany(inDropped);
              replace(index, tag.end);
              index = html.indexOf("<", tag.end);
              continue scan;
            }
            // Closes every dropped element too: none of them is in the returned HTML.
            dropped.clear();
            kept.popMany(inKept);
          } else {
            const inKept = kept.depthOf(name, maxDepth);
            if (inKept !== -1) kept.popMany(inKept);
          }
          if (FOREIGN_CONTEXT.has(name) || HTML_INTEGRATION.has(name)) foreign.pop();
          index = html.indexOf("<", tag.end);
          continue scan;
        }
      case 0x21 /* ! */:
        {
          const declarationEnd = skipMarkupDeclaration(html, index);
          if (declarationEnd === -1) {
            end = index;
            break scan;
          }
          if (!isDoctype(html, index)) replace(index, declarationEnd);
          index = html.indexOf("<", declarationEnd);
          continue scan;
        }
      case 0x3f /* ? */:
        {
          const instructionEnd = html.indexOf(">", index + 2);
          if (instructionEnd === -1) {
            end = index;
            break scan;
          }
          replace(index, instructionEnd + 1);
          index = html.indexOf("<", instructionEnd + 1);
          continue scan;
        }
    }
    index = html.indexOf("<", index + 1);
  }

  if (copyFrom === 0 && end === html.length) return { html, cut, flattened };
  if (end > copyFrom) parts.push(html.slice(copyFrom, end));
  return { html: parts.join(""), cut, flattened };
}

function isDoctype(html: string, start: number): boolean {
  return html.slice(start + 2, start + 9).toLowerCase() === "doctype";
}

/**
 * A raw-text element written again so that no tokenizer can read its end elsewhere: a title with
 * its text (no `<`, no control characters), a JSON-LD script with `<` escaped as JSON escapes it;
 * "" for any other raw-text element (dropped).
 */
function rewriteRawText(name: string, html: string, tag: StartTag, contentEnd: number): string {
  const content = html.slice(tag.end, contentEnd);
  if (name === "title") {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
    return `<title>${content.replace(/[\x00-\x1f<>]/g, " ")}</title>`;
  }
  if (name === "script" && JSON_LD_TYPE.test(html.slice(tag.nameEnd, tag.end))) {
    // The tokenizer's end search reads `\x1c` as `<`; both are escaped as JSON escapes them.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character is what it escapes
    const escaped = content.replace(/[<\x1c]/g, (character) => (character === "<" ? "\\u003c" : "\\u001c"));
    return `<script type="application/ld+json">${escaped}</script>`;
  }
  return "";
}
