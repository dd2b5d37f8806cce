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
  // The cost of compacting a result must not grow with the text it drops: a result 100 times
  // larger takes about as long. Each text is flattened before timing (`repeat` builds a rope that
  // the first read would copy whole), and each size keeps its best of several runs.
  const bestMs = (size: number): { ms: number; snippet: string; title: string } => {
    const huge = "<i>word</i> ".repeat(size);
    assert.ok(/z/.test(huge) === false);
    let best = { ms: Number.POSITIVE_INFINITY, snippet: "", title: "" };
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      const [result] = compactSearchResults(
        [{ title: huge, url: "https://example.com/", snippets: [huge, huge] }],
        planned.plan,
        NOW,
      );
      const ms = performance.now() - started;
      if (ms < best.ms) best = { ms, snippet: result.snippet, title: result.title };
    }
    return best;
  };
  const small = bestMs(20_000);
  const huge = bestMs(2_000_000);
  // Work over the whole text would take ~100 times as long; a fixed allowance absorbs timer noise.
  assert.ok(
    huge.ms < small.ms * 5 + 5,
    `${huge.ms.toFixed(2)} ms for 24 MB, ${small.ms.toFixed(2)} ms for 240 KB`,
  );
  assert.ok(huge.snippet.length <= 240 && huge.snippet.length > 0);
  assert.ok(huge.title.length <= 200 && huge.title.length > 0);
});
