import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parseHTML } from "linkedom";
import { boundHtmlStructure } from "./bound-html-structure.js";
import { convertHtmlToMarkdown } from "./html-to-markdown.js";

const BOUNDS = { maxDepth: 64, maxElements: 5_000 };

interface Node {
  nodeType: number;
  childNodes: ArrayLike<Node>;
}

/** The deepest element nesting of the tree the real parser builds, and its element count. */
function measureTree(html: string): { depth: number; elements: number } {
  const { document } = parseHTML(html) as unknown as { document: Node };
  let depth = 0;
  let elements = 0;
  const pending: [Node, number][] = [[document, 0]];
  while (pending.length > 0) {
    const [node, level] = pending.pop()!;
    const children = node.childNodes;
    for (let index = 0; index < children.length; index++) {
      const child = children[index];
      if (child.nodeType !== 1) continue;
      elements++;
      depth = Math.max(depth, level + 1);
      pending.push([child, level + 1]);
    }
  }
  return { depth, elements };
}

// A pass that searched its open elements on every tag (as the parser does) would not end here:
// 200,000 levels make 10^10 steps.
test("200,000 nested divs become a tree as deep as the bound, with their text", () => {
  const html = `<html><body>${"<div>".repeat(200_000)}deep text${"</div>".repeat(200_000)}<p>after</p></body></html>`;
  const bounded = boundHtmlStructure(html, BOUNDS);
  const tree = measureTree(bounded.html);
  assert.ok(tree.depth <= BOUNDS.maxDepth, `depth ${tree.depth}`);
  assert.equal(bounded.cut, false);
  assert.equal(bounded.flattened, 200_000 - (BOUNDS.maxDepth - 2));
  assert.match(bounded.html, /deep text(<\/div>)+<p>after<\/p><\/body><\/html>$/);
});

test("an ordinary page converts as before", () => {
  const article = readFileSync(new URL("./testdata/article-page.html", import.meta.url), "utf8");
  const bounded = boundHtmlStructure(article, { maxDepth: 128, maxElements: 50_000 });
  assert.equal(bounded.cut, false);
  assert.equal(bounded.flattened, 0);
  assert.deepEqual(
    convertHtmlToMarkdown(bounded.html, "https://bread.example/posts/hydration"),
    convertHtmlToMarkdown(article, "https://bread.example/posts/hydration"),
  );
});

test("past the element bound the page is cut before the next element", () => {
  const html = `<html><body>${"<p>para</p>".repeat(10_000)}</body></html>`;
  const bounded = boundHtmlStructure(html, { maxDepth: 64, maxElements: 100 });
  assert.equal(bounded.cut, true);
  assert.equal(measureTree(bounded.html).elements, 100);
  assert.equal(bounded.html.match(/<p>/g)?.length, 98);
});

test("what is not worth text is dropped; titles, JSON-LD, void elements and unclosed paragraphs stay", () => {
  const html =
    "<!DOCTYPE html><html><head><title>A &amp; B</title>" +
    '<script type="application/ld+json">{"headline":"</scr"}</script><script>if (a < b) {}</script>' +
    "<style>p{}</style></head><body><!-- <div> --><?php echo 1 ?><p>one<p>two<br><img src=x alt=y>" +
    "<textarea><div></textarea><li>a<li>b</body></html>";
  const bounded = boundHtmlStructure(html, BOUNDS);
  assert.equal(
    bounded.html,
    '<!DOCTYPE html><html><head><title>A &amp; B</title><script type="application/ld+json">' +
      '{"headline":"\\u003c/scr"}</script></head><body><p>one<p>two<br><img src=x alt=y><li>a<li>b</body></html>',
  );
  // Unclosed paragraphs and list items close each other: a long run of them is not deep.
  const run = `<body>${"<p>x".repeat(5_000)}${"<li>y".repeat(5_000)}</body>`;
  const flat = boundHtmlStructure(run, { maxDepth: 8, maxElements: 50_000 });
  assert.equal(flat.flattened, 0);
  assert.equal(flat.html, run);
});

test("a tag left open at the end of a cut page is dropped", () => {
  assert.equal(boundHtmlStructure('<p>text</p><a href="http://x', BOUNDS).html, "<p>text</p>");
  assert.equal(boundHtmlStructure("<p>text</p><!-- note", BOUNDS).html, "<p>text</p>");
});

/** Markup that a tokenizer could read otherwise than a naive scan, each followed by deep nesting. */
const TRICKS = [
  '<div title="a>b">',
  "<div a\"b='c>",
  '<div a"b>',
  '<div a=b"c>',
  "<script/>",
  "<svg><path/><path/></svg>",
  "<svg><title/></svg>",
  "<script>\x1c/script><div></script>",
  "<script><</script>",
  "<style></style\x0c>",
  "<textarea></textarea/>",
  "<!-->",
  "<!--->",
  "<!->",
  "<![CDATA[<div>]]>",
  "<![CDAT<div>",
  "<?x <div>>",
  "</ div>",
  "</div/>",
  "</>",
  "</3 <div>>",
  "<title><div></title>",
  "<tItLe>x</TITLE >",
];

const SUFFIX = "\"'>-->]]></script></style></title></textarea>>";

test("tricky markup cannot hide nesting from the bound", () => {
  for (const trick of TRICKS) {
    // The suffix ends whatever a naive scan may have taken the nesting to be inside of.
    const html = `<body>${trick}${"<div><span>".repeat(2_000)}x${"</span></div>".repeat(2_000)}${SUFFIX}</body>`;
    const bounded = boundHtmlStructure(html, BOUNDS);
    const tree = measureTree(bounded.html);
    assert.ok(tree.depth <= BOUNDS.maxDepth, `${JSON.stringify(trick)}: depth ${tree.depth}`);
  }
});

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FRAGMENTS = [
  "<div>",
  "<div>",
  "<div>",
  "<span>",
  "<b>",
  "<p>",
  "<li>",
  "<td>",
  "<tr>",
  "<table>",
  "<svg>",
  "<math>",
  "<path/>",
  "<div/>",
  "<title>",
  "</title>",
  "<script>",
  "</script>",
  "<script/>",
  "<style>",
  "<br>",
  "<img src=x>",
  "</div>",
  "</span>",
  "</p>",
  "</svg>",
  "</ div>",
  "<!--",
  "-->",
  "<![CDATA[",
  "]]>",
  "<?",
  "<!",
  '"',
  "'",
  "=",
  " ",
  ">",
  "<",
  "/",
  "\x1c",
  "text",
  "<a href='x'>",
  "<div class=\"c\" id='d' data-x=y>",
];

test("random tag soup never parses deeper than the bound", () => {
  const next = random(27);
  for (let document = 0; document < 60; document++) {
    const pieces: string[] = [];
    for (let piece = 0; piece < 4_000; piece++) pieces.push(FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]);
    const html = pieces.join("");
    const bounded = boundHtmlStructure(html, { maxDepth: 32, maxElements: 100_000 });
    const tree = measureTree(bounded.html);
    assert.ok(tree.depth <= 32, `document ${document}: depth ${tree.depth}`);
  }
});
