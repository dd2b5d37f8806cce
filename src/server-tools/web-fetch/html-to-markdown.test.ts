import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { convertHtmlToMarkdown } from "./html-to-markdown.js";

const ARTICLE = readFileSync(new URL("./testdata/article-page.html", import.meta.url), "utf8");
const PAGE_URL = "https://breadlab.example.com/posts/2026/hydration";

test("a realistic page becomes markdown of its main content, without site chrome", () => {
  const page = convertHtmlToMarkdown(ARTICLE, `${PAGE_URL}#top`);
  assert.equal(page.readable, true);
  assert.equal(page.title, "Sourdough hydration explained | The Bread Lab");
  assert.match(page.markdown, /^Hydration is the ratio of water to flour/);
  assert.match(page.markdown, /\n## Why hydration matters\n/);
  assert.match(page.markdown, /\n### Measuring precisely\n/);
  assert.match(page.markdown, /\n1\. +Mix flour and water/);
  assert.match(page.markdown, /```\nhydration = water_grams \/ flour_grams \* 100\n```/);
  // Navigation, header, sidebar, ads, footer, scripts and styles are gone.
  for (const chrome of [
    "Shop our flour",
    "About us",
    "Popular posts",
    "newsletter",
    "All rights reserved",
    "Privacy policy",
    "analytics",
    "color: red",
  ]) {
    assert.ok(!page.markdown.includes(chrome), `kept "${chrome}"`);
  }
});

test("links and images are absolute against the page URL; same-page anchors become text", () => {
  const { markdown } = convertHtmlToMarkdown(ARTICLE, PAGE_URL);
  assert.ok(
    markdown.includes("[guide to flour types](https://breadlab.example.com/posts/guides/flour-types.html)"),
  );
  assert.ok(markdown.includes("[gluten research summary](https://example.org/research/gluten)"));
  assert.ok(markdown.includes("![Open crumb of a 78% loaf](https://breadlab.example.com/img/crumb.jpg)"));
  // An image without alt text is decoration; a link to #comments on this page is just text.
  assert.ok(!markdown.includes("spacer.gif"));
  assert.match(markdown, /Jump to comments$/);
  assert.ok(!/\]\([^)]*#comments\)/.test(markdown));
});

test("a <base href> decides how links resolve; script and data links lose their target", () => {
  const html = `<!doctype html><html><head><title>Base</title><base href="https://cdn.example.net/docs/"></head>
    <body><article><h2>Links</h2>
    <p>${"Enough text to count as an article body, repeated for Readability. ".repeat(8)}</p>
    <p>See <a href="intro.html">the intro</a>, <a href="javascript:alert(1)">a script</a>,
    <a href="data:text/html,hi">a data link</a> and <a href="mailto:team@example.com">mail us</a>.</p>
    <p><img src="data:image/png;base64,AAAA" alt="inline pixel"></p>
    </article></body></html>`;
  const { markdown } = convertHtmlToMarkdown(html, "https://www.example.com/a/b");
  assert.ok(markdown.includes("[the intro](https://cdn.example.net/docs/intro.html)"));
  assert.ok(markdown.includes("a script,"));
  assert.ok(!markdown.includes("javascript:"));
  assert.ok(!markdown.includes("data:"));
  assert.ok(markdown.includes("[mail us](mailto:team@example.com)"));
  assert.ok(!markdown.includes("inline pixel"));
});

test("a short page without an article keeps its text and loses navigation, footer and scripts", () => {
  const html = `<html><head><title> Tiny  page </title></head><body>
    <nav><a href="/x">Menu entry</a></nav>
    <h1>Status</h1><p>All systems <a href="/status/details">operational</a>.</p>
    <footer>Footer words</footer><script>var secret = 1;</script></body></html>`;
  const page = convertHtmlToMarkdown(html, "http://status.example.com/");
  assert.equal(page.title, "Tiny page");
  assert.ok(page.markdown.includes("Status"));
  assert.ok(page.markdown.includes("All systems [operational](http://status.example.com/status/details)."));
  for (const dropped of ["Menu entry", "Footer words", "secret"])
    assert.ok(!page.markdown.includes(dropped), dropped);
});

test("pages that leave out <html>, <head> or <body> (valid HTML) are read like complete ones", () => {
  const pages = [
    "<!doctype html><title>Short</title><h2>Hello</h2><p>Body <a href='/y'>text</a></p>",
    "<html><head><title>Short</title></head><h2>Hello</h2><p>Body <a href='/y'>text</a></p></html>",
    "<head><title>Short</title></head><body><h2>Hello</h2><p>Body <a href='/y'>text</a></p></body>",
  ];
  for (const html of pages) {
    const page = convertHtmlToMarkdown(html, "http://example.com/a");
    assert.equal(page.title, "Short", html);
    assert.equal(page.markdown, "## Hello\n\nBody [text](http://example.com/y)", html);
  }
});
