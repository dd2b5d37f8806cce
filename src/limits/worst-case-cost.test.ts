import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalRequest } from "../canonical/index.js";
import type { UpstreamInputRules } from "../metering/bound-input-tokens.js";
import { computeCostMicroUsd } from "../metering/compute-cost.js";
import { estimateInputTokens } from "../metering/estimate-usage.js";
import { convertUsdPerMillionToPicoPerToken as price } from "../metering/prices.js";
import {
  addFixedCost,
  computeAffordableOutputCap,
  computeReservation,
  estimateWorstCase,
} from "./worst-case-cost.js";

const prices = {
  promptPicoUsd: price("3"),
  completionPicoUsd: price("15"),
  cachedPromptPicoUsd: price("0.3"),
  cacheWritePicoUsd: price("3.75"),
  cacheWrite1hPicoUsd: price("6"),
};

const O200K: UpstreamInputRules = {
  tokenizer: "o200k",
  imageTokens: (size) => (size === undefined ? 1_600 : 100),
  pdfPageTokens: 3_000,
  toolPromptTokens: 0,
};
const BOUNDS = { rules: O200K, contextLength: 128_000 };

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: "a/b",
    system: [{ type: "text", text: "You are terse." }],
    messages: [{ role: "user", content: [{ type: "text", text: "Count to three, please." }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
    ...overrides,
  };
}

test("worst case: bounded input at the prompt rate plus the whole output cap", () => {
  const worst = estimateWorstCase(request(), prices, 1_000, BOUNDS);
  // For an o200k upstream and ordinary text the bound is the estimate.
  const input = estimateInputTokens(request());
  assert.equal(worst.inputTokens, input);
  // Exactly what the bill would be if the estimate held and the cap were used up.
  assert.equal(
    worst.amountMicroUsd,
    computeCostMicroUsd(
      {
        inputTokens: input,
        outputTokens: 1_000,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        reasoningTokens: 0,
      },
      prices,
    ),
  );
});

test("cache markers reserve the input at the cache-write rate; images of unknown size at the kind's most", () => {
  const plain = estimateWorstCase(request(), prices, 0, BOUNDS);
  const cached = estimateWorstCase(
    request({ system: [{ type: "text", text: "You are terse.", cacheControl: { type: "ephemeral" } }] }),
    prices,
    0,
    BOUNDS,
  );
  const hour = estimateWorstCase(
    request({
      system: [{ type: "text", text: "You are terse.", cacheControl: { type: "ephemeral", ttl: "1h" } }],
    }),
    prices,
    0,
    BOUNDS,
  );
  assert.equal(cached.inputPicoUsd, (plain.inputPicoUsd * 375n) / 300n);
  assert.equal(hour.inputPicoUsd, plain.inputPicoUsd * 2n);
  // The rate of one more input token (a tool result added to the next round) is the same rate.
  assert.equal(plain.inputTokenPicoUsd, prices.promptPicoUsd);
  assert.equal(cached.inputTokenPicoUsd, prices.cacheWritePicoUsd);
  assert.equal(hour.inputTokenPicoUsd, prices.cacheWrite1hPicoUsd);
  assert.equal(plain.inputPicoUsd, BigInt(plain.inputTokens) * plain.inputTokenPicoUsd);
  const withImage = estimateWorstCase(
    request({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Count to three, please." },
            { type: "image", source: { kind: "url", url: "https://example.com/a.png" } },
          ],
        },
      ],
    }),
    prices,
    0,
    BOUNDS,
  );
  assert.equal(withImage.inputTokens, plain.inputTokens + 1_600);
});

test("the affordable cap is the largest whose reservation fits the headroom", () => {
  const worst = estimateWorstCase(request(), prices, 4_096, BOUNDS);
  const input = computeReservation(worst, 0);
  assert.equal(computeAffordableOutputCap(worst, input - 1), 0);
  const headroom = input + 1_000; // 1000 µUSD at 15 µUSD per token → 66 tokens
  const cap = computeAffordableOutputCap(worst, headroom);
  assert.equal(cap, 66);
  assert.ok(computeReservation(worst, cap) <= headroom);
  assert.ok(computeReservation(worst, cap + 1) > headroom);
  assert.equal(computeAffordableOutputCap(worst, 10_000_000_000), 4_096);
});

test("the input bound never passes the model's context length", () => {
  const huge = request({
    messages: [{ role: "user", content: [{ type: "text", text: "y".repeat(500_000) }] }],
  });
  assert.equal(estimateWorstCase(huge, prices, 0, BOUNDS).inputTokens, 128_000);
  assert.equal(
    estimateWorstCase(huge, prices, 0, { rules: O200K, contextLength: 1_000_000 }).inputTokens > 500_000,
    true,
  );
});

test("tokens the gateway adds count toward the input, within the context length", () => {
  const plain = estimateWorstCase(request(), prices, 1_000, BOUNDS);
  const withText = estimateWorstCase(request(), prices, 1_000, { ...BOUNDS, extraTokens: 5_000 });
  assert.equal(withText.inputTokens, plain.inputTokens + 5_000);
  assert.equal(withText.amountMicroUsd, plain.amountMicroUsd + 15_000); // 5,000 tokens at $3/M
  const capped = estimateWorstCase(request(), prices, 1_000, { ...BOUNDS, extraTokens: 1_000_000 });
  assert.equal(capped.inputTokens, BOUNDS.contextLength);
});

test("a fixed cost rides with the input: reserved, and the affordable output cap leaves room for it", () => {
  const worst = estimateWorstCase(request(), prices, 1_000, BOUNDS);
  const withFee = addFixedCost(worst, 3_000);
  assert.equal(withFee.amountMicroUsd, worst.amountMicroUsd + 3_000);
  assert.equal(addFixedCost(worst, 0), worst);
  // The headroom that affords the whole cap without the fee affords 200 tokens less with it
  // (3,000 micro-USD at $15/M output).
  const headroom = worst.amountMicroUsd;
  assert.equal(computeAffordableOutputCap(worst, headroom), 1_000);
  assert.equal(computeAffordableOutputCap(withFee, headroom), 800);
  assert.equal(computeAffordableOutputCap(withFee, 3_000), 0);
});

test("a prompt bound past a tier's threshold is reserved at the tier's prices; one below it at the base", () => {
  const tiered = Object.assign({}, prices, {
    tiers: [
      {
        abovePromptTokens: 20,
        prices: {
          promptPicoUsd: price("6"),
          completionPicoUsd: price("22.5"),
          cachedPromptPicoUsd: price("0.6"),
          cacheWritePicoUsd: price("7.5"),
          cacheWrite1hPicoUsd: price("12"),
        },
      },
    ],
  });
  const short = request({
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  });
  const long = request({
    messages: [{ role: "user", content: [{ type: "text", text: "one two three ".repeat(20) }] }],
  });
  const below = estimateWorstCase(short, tiered, 100, BOUNDS);
  assert.ok(below.inputTokens <= 20);
  assert.equal(below.inputTokenPicoUsd, price("3"));
  assert.equal(below.outputTokenPicoUsd, price("15"));
  const above = estimateWorstCase(long, tiered, 100, BOUNDS);
  assert.ok(above.inputTokens > 20);
  assert.equal(above.inputTokenPicoUsd, price("6"));
  assert.equal(above.outputTokenPicoUsd, price("22.5"));
  // Tokens the gateway adds (a tool round's results) count toward the tier too.
  const pushed = estimateWorstCase(short, tiered, 100, {
    rules: O200K,
    contextLength: 128_000,
    extraTokens: 50,
  });
  assert.equal(pushed.inputTokenPicoUsd, price("6"));
});

test("OpenAI's longer prompt_cache_retention reserves the input at the extended write price", () => {
  const openAi = Object.assign({}, prices, { cacheWrite1hPicoUsd: price("7.5") });
  const asked = (retention: string) =>
    estimateWorstCase(request({ passthrough: { prompt_cache_retention: retention } }), openAi, 0, BOUNDS);
  assert.equal(asked("24h").inputTokenPicoUsd, price("7.5"));
  assert.equal(asked("12h").inputTokenPicoUsd, price("7.5"));
  assert.equal(asked("in_memory").inputTokenPicoUsd, price("3"));
  assert.equal(estimateWorstCase(request(), openAi, 0, BOUNDS).inputTokenPicoUsd, price("3"));
});
