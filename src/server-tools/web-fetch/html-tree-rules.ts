/**
 * How htmlparser2 (the parser under linkedom) builds a tree from tags, as far as the depth of that
 * tree goes: which elements open nothing, which read their content as text, which start tags close
 * open elements first, and where a self-closing tag closes itself.
 */

export const VOID_ELEMENTS = new Set([
  "area",
  "base",
  "basefont",
  "br",
  "col",
  "command",
  "embed",
  "frame",
  "hr",
  "img",
  "input",
  "isindex",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);

/** Elements whose content the tokenizer reads as text up to their end tag. */
export const RAW_TEXT_END: Record<string, RegExp> = {
  script: /<\/script[ \t\n\f\r>]/gi,
  style: /<\/style[ \t\n\f\r>]/gi,
  title: /<\/title[ \t\n\f\r>]/gi,
  textarea: /<\/textarea[ \t\n\f\r>]/gi,
  xmp: /<\/xmp[ \t\n\f\r>]/gi,
};

/** Where a self-closing tag closes itself (`true`), and the elements inside them where it does not. */
export const FOREIGN_CONTEXT = new Set(["math", "svg"]);
export const HTML_INTEGRATION = new Set([
  "mi",
  "mo",
  "mn",
  "ms",
  "mtext",
  "annotation-xml",
  "foreignobject",
  "desc",
  "title",
]);

const P_ONLY = new Set(["p"]);
const FORM_TAGS = new Set(["input", "option", "optgroup", "select", "button", "datalist", "textarea"]);
const DD_DT = new Set(["dd", "dt"]);
const RT_RP = new Set(["rt", "rp"]);
const TABLE_SECTIONS = new Set(["thead", "tbody"]);

/** The open elements a start tag closes first (htmlparser2's table). */
export const IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ["tr", new Set(["tr", "th", "td"])],
  ["th", new Set(["th"])],
  ["td", new Set(["thead", "th", "td"])],
  ["body", new Set(["head", "link", "script"])],
  ["li", new Set(["li"])],
  ["option", new Set(["option"])],
  ["optgroup", new Set(["optgroup", "option"])],
  ["dd", DD_DT],
  ["dt", DD_DT],
  ["rt", RT_RP],
  ["rp", RT_RP],
  ["tbody", TABLE_SECTIONS],
  ["tfoot", TABLE_SECTIONS],
  ...["select", "input", "output", "button", "datalist", "textarea"].map(
    (name): [string, ReadonlySet<string>] => [name, FORM_TAGS],
  ),
  ...[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "pre",
    "section",
    "table",
    "ul",
  ].map((name): [string, ReadonlySet<string>] => [name, P_ONLY]),
]);
