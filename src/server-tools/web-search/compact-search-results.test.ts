import assert from "node:assert/strict";
import { test } from "node:test";
import { cleanText, compactSearchResults, truncateText } from "./compact-search-results.js";
import { planSearch } from "./plan-search.js";

const NOW = new Date("2026-03-10T12:00:00Z");

test("snippets are plain text: tags dropped, entities decoded, control characters and runs of space folded", () => {
  assert.equal(
    cleanText("A&nbsp;<b>bold</b>&#x27;s &lt;tag&gt; &#128512; &bogus; &#xD800;\u0000\tend", 1000),
    "A bold's <tag> 😀 &bogus; &#xD800; end",
  );
});

test("cuts land on a word boundary, never inside a surrogate pair, and are marked", () => {
  assert.equal(truncateText("aaaa bbbb cccc dddd eeee", 16), "aaaa bbbb cccc…");
  // No space near the end: a hard cut rather than losing most of the room.
  assert.equal(truncateText("one two three four five", 12), "one two thr…");
  assert.equal(truncateText("short", 12), "short");
  const emoji = `${"x".repeat(9)}😀😀`;
  const cut = truncateText(emoji, 11);
  assert.equal(cut, `${"x".repeat(9)}…`);
  assert.ok(!/[\ud800-\udbff]…$/.test(cut));
});

test("a huge snippet costs only what is kept", () => {
  const planned = planSearch({ query: "q", contextSize: "low" }, 10);
  assert.ok(planned.ok);
  const huge = `${"<i>word</i> ".repeat(2_000_000)}`;
  const started = performance.now();
  const [result] = compactSearchResults(
    [{ title: huge, url: "https://example.com/", snippets: [huge, huge] }],
    planned.plan,
    NOW,
  );
  assert.ok(performance.now() - started < 200);
  assert.ok(result.snippet.length <= 240);
  assert.ok(result.title.length <= 200);
});
