/**
 * Exact cost. Golden usage objects in each provider's documented shape go through
 * the adapter's usage mapping into canonical usage and through computeCostMicroUsd: every token is
 * billed once, at the rate of its class. Then, on a real gateway in both runtime modes, the cost a
 * chat response reports equals the generation record's `total_cost` and `cost_micro_usd`, streamed
 * and not.
 *
 * The usage objects are written here from the providers' documented formats (not copied from
 * recordings): Anthropic's cache reads and 5-minute / 1-hour cache writes, OpenAI's cached and
 * reasoning tokens (Chat Completions and Responses), Gemini's thoughts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalUsage } from "../../src/canonical/index.js";
import { computeCostMicroUsd } from "../../src/metering/compute-cost.js";
import type { ModelPrices } from "../../src/metering/prices.js";
import { convertUsdPerMillionToPicoPerToken } from "../../src/metering/prices.js";
import { mapUsage as mapAnthropicUsage } from "../../src/providers/anthropic/map-usage.js";
import { mapUsage as mapGeminiUsage } from "../../src/providers/google/map-usage.js";
import { mapUsage as mapChatUsage } from "../../src/providers/openai-compatible/map-usage.js";
import { mapResponsesUsage } from "../../src/providers/openai-responses/map-usage.js";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL } from "../helpers/test-gateway.js";

function prices(
  prompt: string,
  completion: string,
  cached: string,
  write = prompt,
  write1h = write,
): ModelPrices {
  const price = convertUsdPerMillionToPicoPerToken;
  return {
    promptPicoUsd: price(prompt),
    completionPicoUsd: price(completion),
    cachedPromptPicoUsd: price(cached),
    cacheWritePicoUsd: price(write),
    cacheWrite1hPicoUsd: price(write1h),
  };
}

/** Σ tokens × rate per class in pico-USD, rounded up once: the bill written out by hand. */
function billByHand(classes: Array<[tokens: number, picoPerToken: bigint]>): number {
  const pico = classes.reduce((sum, [tokens, rate]) => sum + BigInt(tokens) * rate, 0n);
  return Number((pico + 999_999n) / 1_000_000n);
}

function assertUsage(actual: CanonicalUsage, expected: Partial<CanonicalUsage>): void {
  for (const [field, value] of Object.entries(expected)) {
    assert.equal(actual[field as keyof CanonicalUsage], value, field);
  }
}

test("Anthropic: uncached input, cache reads, 5-minute and 1-hour writes, output — each once", () => {
  // Claude Sonnet-class: $3 in, $15 out, $0.30 cache read, $3.75 5-minute write, $6 1-hour write.
  const rates = prices("3", "15", "0.30", "3.75", "6");
  const wire = {
    input_tokens: 21,
    cache_creation_input_tokens: 3_072,
    cache_read_input_tokens: 10_240,
    cache_creation: { ephemeral_5m_input_tokens: 1_024, ephemeral_1h_input_tokens: 2_048 },
    output_tokens: 503,
    service_tier: "standard",
  };
  const usage = mapAnthropicUsage(wire);
  assertUsage(usage, {
    inputTokens: 21 + 3_072 + 10_240,
    cachedInputTokens: 10_240,
    cacheWriteTokens: 1_024,
    cacheWrite1hTokens: 2_048,
    outputTokens: 503,
  });
  const expected = billByHand([
    [21, rates.promptPicoUsd],
    [10_240, rates.cachedPromptPicoUsd],
    [1_024, rates.cacheWritePicoUsd],
    [2_048, rates.cacheWrite1hPicoUsd],
    [503, rates.completionPicoUsd],
  ]);
  // 63 + 3072 + 3840 + 12288 + 7545 µUSD
  assert.equal(expected, 26_808);
  assert.equal(computeCostMicroUsd(usage, rates), expected);
});

test("Anthropic: a write without the TTL split is a 5-minute write; thinking is output", () => {
  const rates = prices("3", "15", "0.30", "3.75", "6");
  const usage = mapAnthropicUsage({
    input_tokens: 5,
    cache_creation_input_tokens: 1_000,
    cache_read_input_tokens: 0,
    output_tokens: 2_000,
    output_tokens_details: { thinking_tokens: 1_500 },
  });
  assertUsage(usage, { cacheWriteTokens: 1_000, cacheWrite1hTokens: 0, reasoningTokens: 1_500 });
  assert.equal(
    computeCostMicroUsd(usage, rates),
    billByHand([
      [5, rates.promptPicoUsd],
      [1_000, rates.cacheWritePicoUsd],
      [2_000, rates.completionPicoUsd], // thinking inside output, not added again
    ]),
  );
});

test("OpenAI Chat Completions and Responses: cached prompt and reasoning — each once", () => {
  // GPT-class: $1.25 in, $10 out, $0.125 cached.
  const rates = prices("1.25", "10", "0.125");
  const chat = mapChatUsage({
    prompt_tokens: 2_006,
    completion_tokens: 300,
    total_tokens: 2_306,
    prompt_tokens_details: { cached_tokens: 1_920, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 192,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  } as never);
  const responses = mapResponsesUsage({
    input_tokens: 2_006,
    input_tokens_details: { cached_tokens: 1_920 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 192 },
    total_tokens: 2_306,
  } as never);
  const expected = billByHand([
    [86, rates.promptPicoUsd],
    [1_920, rates.cachedPromptPicoUsd],
    [300, rates.completionPicoUsd],
  ]);
  assert.equal(expected, 3_348); // 107.5 + 240 + 3000, rounded up once
  for (const usage of [chat, responses]) {
    assertUsage(usage, {
      inputTokens: 2_006,
      cachedInputTokens: 1_920,
      outputTokens: 300,
      reasoningTokens: 192,
    });
    assert.equal(computeCostMicroUsd(usage, rates), expected);
  }
});

test("Gemini: thoughts are billed as output on top of candidates; cached content at its rate", () => {
  // Gemini Flash-class: $0.30 in, $2.50 out, $0.03 cached.
  const rates = prices("0.30", "2.50", "0.03");
  const usage = mapGeminiUsage({
    promptTokenCount: 1_200,
    candidatesTokenCount: 150,
    thoughtsTokenCount: 850,
    cachedContentTokenCount: 1_024,
    totalTokenCount: 2_200,
  } as never);
  assertUsage(usage, {
    inputTokens: 1_200,
    outputTokens: 1_000,
    reasoningTokens: 850,
    cachedInputTokens: 1_024,
  });
  assert.equal(usage.inputTokens + usage.outputTokens, 2_200, "input + output = totalTokenCount");
  const expected = billByHand([
    [176, rates.promptPicoUsd],
    [1_024, rates.cachedPromptPicoUsd],
    [1_000, rates.completionPicoUsd],
  ]);
  assert.equal(expected, 2_584); // 52.8 + 30.72 + 2500
  assert.equal(computeCostMicroUsd(usage, rates), expected);
});

// Test catalog prices: $2 in, $8 out, $0.50 cached → 86·2 + 1920·0.5 + 300·8 = 3532 µUSD.
const USAGE = {
  prompt_tokens: 2_006,
  completion_tokens: 300,
  total_tokens: 2_306,
  prompt_tokens_details: { cached_tokens: 1_920 },
  completion_tokens_details: { reasoning_tokens: 192 },
};
const COST_MICRO_USD = 3_532;

forEachGatewayMode("the response's cost is the generation record's cost", async (context, t) => {
  const lookup = async (requestId: string) => {
    const response = await fetch(`${context.url}/api/v1/generation?id=${requestId}`, {
      headers: { Authorization: `Bearer ${context.apiKey}` },
    });
    return (
      (await response.json()) as { data: { total_cost: number; cost_micro_usd: string; status: string } }
    ).data;
  };

  await t.test("non-streaming", async () => {
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ usage: USAGE })));
    const { data, response } = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    const cost = (data.usage as unknown as { cost: number }).cost;
    assert.equal(cost, COST_MICRO_USD / 1e6);
    const record = await lookup(response.headers.get("x-request-id")!);
    assert.equal(record.cost_micro_usd, String(COST_MICRO_USD));
    assert.equal(record.total_cost, cost);
  });

  await t.test("streaming", async () => {
    context.upstream.enqueue(fakeReply.sse(buildTextChunks(["Hel", "lo"], { usage: USAGE })));
    const { data: stream, response } = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }], stream: true })
      .withResponse();
    let cost: number | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) cost = (chunk.usage as unknown as { cost: number }).cost;
    }
    assert.equal(cost, COST_MICRO_USD / 1e6);
    const requestId = response.headers.get("x-request-id")!;
    // Settlement runs as the stream ends; the record is final right after.
    let record = await lookup(requestId);
    for (let attempt = 0; attempt < 50 && record.status === "in_progress"; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      record = await lookup(requestId);
    }
    assert.equal(record.cost_micro_usd, String(COST_MICRO_USD));
    assert.equal(record.total_cost, cost);
  });
});
