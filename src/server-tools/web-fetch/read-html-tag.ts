/**
 * Reading tags as htmlparser2's tokenizer (the parser under linkedom) reads them, for the pass
 * that bounds a page's tree before it is parsed (bound-html-structure.ts): where a start tag ends
 * (a quote opens a value only after `=`), whether it closes itself, where an end tag and a
 * `<!…>` construct end. Each reads forward only, so a page is read in linear time.
 */

export interface StartTag {
  nameEnd: number;
  /** Just past the `>`. */
  end: number;
  selfClosing: boolean;
}

enum TagState {
  BeforeAttributeName,
  SelfClosing,
  AttributeName,
  AfterAttributeName,
  BeforeAttributeValue,
  UnquotedValue,
}

/**
 * The start tag whose name begins at `nameStart`, read as htmlparser2's tokenizer reads it (a
 * quote opens a value only after `=`); undefined when the input ends inside it.
 */
export function readStartTag(html: string, nameStart: number): StartTag | undefined {
  const length = html.length;
  let position = nameStart;
  while (position < length && !isEndOfTagSection(html.charCodeAt(position))) position++;
  const nameEnd = position;
  let state = TagState.BeforeAttributeName;
  while (position < length) {
    const code = html.charCodeAt(position);
    switch (state) {
      case TagState.BeforeAttributeName:
        if (code === 0x3e) return { nameEnd, end: position + 1, selfClosing: false };
        if (code === 0x2f) state = TagState.SelfClosing;
        else if (!isWhitespace(code)) state = TagState.AttributeName;
        position++;
        continue;
      case TagState.SelfClosing:
        if (code === 0x3e) return { nameEnd, end: position + 1, selfClosing: true };
        if (isWhitespace(code)) {
          position++;
        } else {
          state = TagState.BeforeAttributeName;
        }
        continue;
      case TagState.AttributeName:
        if (code === 0x3d || isEndOfTagSection(code)) state = TagState.AfterAttributeName;
        else position++;
        continue;
      case TagState.AfterAttributeName:
        if (code === 0x3d) {
          state = TagState.BeforeAttributeValue;
          position++;
        } else if (code === 0x2f || code === 0x3e) {
          state = TagState.BeforeAttributeName;
        } else {
          if (!isWhitespace(code)) state = TagState.AttributeName;
          position++;
        }
        continue;
      case TagState.BeforeAttributeValue:
        if (code === 0x22 || code === 0x27) {
          const close = html.indexOf(code === 0x22 ? '"' : "'", position + 1);
          if (close === -1) return undefined;
          position = close + 1;
          state = TagState.BeforeAttributeName;
        } else if (isWhitespace(code)) {
          position++;
        } else {
          state = TagState.UnquotedValue;
        }
        continue;
      case TagState.UnquotedValue:
        if (isWhitespace(code) || code === 0x3e) state = TagState.BeforeAttributeName;
        else position++;
        continue;
    }
  }
  return undefined;
}

/**
 * The end tag at `start` (`</`), read as htmlparser2 reads it: spaces may precede the name, which
 * ends at a space or `>`; everything up to the next `>` belongs to the tag. `nameEnd` is -1 for a
 * `</` not followed by a letter (no element closes). Undefined when the input ends inside it.
 */
export function readEndTag(
  html: string,
  start: number,
): { nameStart: number; nameEnd: number; end: number } | undefined {
  const length = html.length;
  let position = start + 2;
  while (position < length && isWhitespace(html.charCodeAt(position))) position++;
  if (position >= length) return undefined;
  const first = html.charCodeAt(position);
  if (first === 0x3e) return { nameStart: position, nameEnd: -1, end: position + 1 };
  if (!isAsciiLetter(first)) {
    const close = html.indexOf(">", position + 1);
    return close === -1 ? undefined : { nameStart: position, nameEnd: -1, end: close + 1 };
  }
  const nameStart = position;
  while (position < length) {
    const code = html.charCodeAt(position);
    if (code === 0x3e || isWhitespace(code)) break;
    position++;
  }
  const close = html.indexOf(">", position);
  return close === -1 ? undefined : { nameStart, nameEnd: position, end: close + 1 };
}

/**
 * Just past the `<!…` construct at `start`, as htmlparser2 ends it: a comment at the first `-->`
 * (its opening dashes may be part of it: `<!-->`), CDATA at `]]>`, anything else at the first
 * `>` after the character following `<!` (`<!->` is not closed by its own `>`). -1 when the input
 * ends inside it.
 */
export function skipMarkupDeclaration(html: string, start: number): number {
  if (html.startsWith("<!--", start)) {
    const close = html.indexOf("-->", start + 2);
    return close === -1 ? -1 : close + 3;
  }
  if (html.startsWith("<![CDATA[", start)) {
    const close = html.indexOf("]]>", start + 9);
    return close === -1 ? -1 : close + 3;
  }
  let from = start + 3;
  if (html.charCodeAt(start + 2) === 0x2d /* - */) from = start + 4;
  else if (html.charCodeAt(start + 2) === 0x5b /* [ */) {
    // `<![` and as much of `CDATA[` as matched are consumed; the mismatch is read again.
    const sequence = "CDATA[";
    let matched = 0;
    while (matched < sequence.length && html[start + 3 + matched] === sequence[matched]) matched++;
    from = start + 3 + matched;
  }
  const close = html.indexOf(">", from);
  return close === -1 ? -1 : close + 1;
}

export function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

export function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0c || code === 0x0d;
}

function isEndOfTagSection(code: number): boolean {
  return code === 0x2f || code === 0x3e || isWhitespace(code);
}
