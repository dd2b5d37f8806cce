import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { TOKEN_CORPUS_PATH } from "../../test/helpers/fixture-paths.js";
import { countO200kTokensBounded } from "./count-o200k-tokens.js";
import { TokenCounter } from "./estimate-usage.js";
import { ANTHROPIC_TEXT_BOUND, boundTextTokens, GOOGLE_TEXT_BOUND } from "./text-token-bounds.js";

interface Sample {
  id: string;
  text: string;
  reference_tokens: { claude_public_tokenizer: number; gemma3_tokenizer: number };
}

const corpus = JSON.parse(readFileSync(TOKEN_CORPUS_PATH, "utf8")) as Sample[];

const o200k = (text: string) => countO200kTokensBounded(text, 0, Number.MAX_SAFE_INTEGER).tokens;

test("on the corpus, each bound is at or above the reference count and at most ~1.35× it", () => {
  for (const sample of corpus) {
    const tokens = o200k(sample.text);
    // Anthropic's current tokenizer counts about 30 % more than the public one: reference × 1.35.
    const claude = Math.ceil(sample.reference_tokens.claude_public_tokenizer * 1.35);
    const anthropic = boundTextTokens(sample.text, tokens, ANTHROPIC_TEXT_BOUND);
    assert.ok(anthropic >= claude, `${sample.id}: ${anthropic} < ${claude}`);
    assert.ok(anthropic <= claude * 1.35, `${sample.id}: ${anthropic} > 1.35 × ${claude}`);
    const gemini = sample.reference_tokens.gemma3_tokenizer;
    const google = boundTextTokens(sample.text, tokens, GOOGLE_TEXT_BOUND);
    assert.ok(google >= gemini, `${sample.id}: ${google} < ${gemini}`);
    assert.ok(google <= gemini * 1.36, `${sample.id}: ${google} > 1.36 × ${gemini}`);
    assert.ok(
      anthropic < Buffer.byteLength(sample.text) && google < Buffer.byteLength(sample.text),
      sample.id,
    );
  }
});

test("never above the text's UTF-8 bytes; unmeasured scripts count their bytes", () => {
  assert.equal(boundTextTokens("", 0, ANTHROPIC_TEXT_BOUND), 0);
  // Arabic and an emoji: no measured weight, so the bound is the byte length.
  const text = "مرحبا 👋";
  assert.equal(boundTextTokens(text, o200k(text), ANTHROPIC_TEXT_BOUND), Buffer.byteLength(text));
  assert.equal(boundTextTokens("aaaa", 1_000, GOOGLE_TEXT_BOUND), 4);
});

test("linear in the text: pathological input past the tokenizer's budget counts by bytes", () => {
  // One long unbroken run of mixed scripts: the tokenizer's budget ends and the rest is bytes.
  const unit = "ж字a한\u0905".repeat(1_000);
  const measure = (copies: number) => {
    const text = unit.repeat(copies);
    let best = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = performance.now();
      const counter = new TokenCounter();
      const tokens = boundTextTokens(text, counter.bound(text), ANTHROPIC_TEXT_BOUND);
      best = Math.min(best, performance.now() - started);
      assert.ok(tokens <= Buffer.byteLength(text));
    }
    return best;
  };
  const small = measure(50);
  const large = measure(400);
  // 8× the text: a linear pass takes about 8× as long; a quadratic one ~64×.
  assert.ok(large < small * 24 + 50, `${large.toFixed(1)} ms for 8× the text of ${small.toFixed(1)} ms`);
});
