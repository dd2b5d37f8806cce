import assert from "node:assert/strict";
import { test } from "node:test";
import { CONTENT_BYTES_PER_TOKEN, truncateToTokenBudget } from "./truncate-to-token-budget.js";

test("text within the budget is returned as is", () => {
  const text = "a".repeat(300);
  assert.deepEqual(truncateToTokenBudget(text, 100), { text, truncated: false });
  assert.equal(truncateToTokenBudget("a".repeat(301), 100).truncated, true);
});

test("the budget counts UTF-8 bytes, and a cut never splits a character", () => {
  // 2 × 4-byte emoji per 8 bytes; an 11-byte budget keeps exactly two.
  const { text, truncated } = truncateToTokenBudget("😀😀😀😀😀😀", 11 / CONTENT_BYTES_PER_TOKEN);
  assert.equal(truncated, true);
  assert.ok(text.startsWith("😀😀\n\n[Truncated"));
  const cjk = truncateToTokenBudget("漢".repeat(1000), 100);
  assert.ok(cjk.text.startsWith("漢".repeat(100)));
  assert.ok(!cjk.text.startsWith("漢".repeat(101)));
  assert.ok(!cjk.text.includes("\uFFFD"));
});

test("the cut prefers a paragraph, then a line, then a word break near the end", () => {
  const paragraphs = `${"first paragraph words ".repeat(10).trim()}\n\n${"second paragraph words ".repeat(10)}`;
  const cut = truncateToTokenBudget(paragraphs, (paragraphs.length - 20) / CONTENT_BYTES_PER_TOKEN);
  assert.ok(
    cut.text.startsWith(
      `${"first paragraph words ".repeat(10).trim()}\n\n${"second paragraph words ".repeat(9).trim()}\n\n[`,
    ),
  );
  const words = truncateToTokenBudget(
    "alpha beta gamma delta epsilon zeta eta theta",
    30 / CONTENT_BYTES_PER_TOKEN,
  );
  assert.ok(words.text.startsWith("alpha beta gamma delta epsilon\n\n["));
});

test("a page of many megabytes is cut at the budget, quickly", () => {
  // Decoded like a page (a flat string; "x".repeat would build a rope that the first read flattens).
  const text = Buffer.alloc(50 * 1024 * 1024, "x").toString("latin1");
  const started = performance.now();
  const result = truncateToTokenBudget(text, 25_000);
  assert.equal(result.truncated, true);
  assert.ok(performance.now() - started < 1000, `${performance.now() - started} ms`);
  assert.equal(result.text.indexOf("\n\n[Truncated"), 75_000);
});
