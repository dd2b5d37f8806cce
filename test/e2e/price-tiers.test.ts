/**
 * Price tiers end to end: models priced by prompt size behind a real gateway, asked in the three
 * formats, streamed and not, with each fake upstream reporting a prompt of exactly the threshold
 * and of one token more. The generation record's cost is the base tier's at the threshold and the
 * tier's one token past it.
 *
 * - An OpenAI-format upstream with OpenAI's long-context rule: above 272,000 prompt tokens, 2×
 *   input and cache, 1.5× output (both runtime modes).
 * - An Anthropic upstream with Claude Haiku 5.5's rule: above 100,000 prompt tokens counting cache
 *   reads and both cache writes, 5× every class.
 * - A Gemini upstream with Gemini Pro's kind of rule: above 200,000 prompt tokens, cached content
 *   included.
 *
 * Each prompt is large enough that its reservation reaches the tier, so no bill is capped by it.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  anthropicReply,
  buildMessage,
  buildTextStream,
  buildUsage,
  startFakeAnthropicUpstream,
} from "../helpers/fake-anthropic-upstream.js";
import {
  buildGeminiTextChunks,
  buildGenerateContentResponse,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../helpers/fake-google-upstream.js";
import {
  buildChatCompletion,
  buildTextChunks,
  type FakeReply,
  fakeReply,
} from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, startTestGateway, type TestGateway } from "../helpers/test-gateway.js";

const OUTPUT_TOKENS = 10;

function catalogModel(slug: string, provider: string, pricing: Record<string, unknown>) {
  return {
    slug,
    name: slug,
    provider: { slug: "test", name: "Test" },
    description: "priced by prompt size",
    context_length: 400_000,
    max_output_tokens: 1_000,
    pricing,
    features: ["streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider, model: `${provider}-long-model` }],
  };
}

/** A kind's model, its threshold, the prompt that reaches the tier, and the fake's answer. */
interface TierCase {
  model: string;
  threshold: number;
  prompt: string;
  reply(promptTokens: number, stream: boolean): FakeReply;
  /** µUSD of the base tier at the threshold and of the tier one token past it. */
  costs: [atThreshold: number, pastThreshold: number];
}

const OPENAI_CASE: TierCase = {
  model: "test/openai-long",
  threshold: 272_000,
  // About 300,000 o200k tokens: the reservation's bound passes the threshold.
  prompt: " hello".repeat(300_000),
  reply: (promptTokens, stream) => {
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: OUTPUT_TOKENS,
      total_tokens: promptTokens + OUTPUT_TOKENS,
    };
    return stream
      ? fakeReply.sse(buildTextChunks(["Hel", "lo"], { usage }))
      : fakeReply.json(buildChatCompletion({ usage }));
  },
  // $0.20 / $0.80 per 1M; above 272,000: $0.40 / $1.20.
  // 272,000 × 0.2 + 10 × 0.8 = 54,408; 272,001 × 0.4 + 10 × 1.2 = 108,812.4 → 108,813.
  costs: [54_408, 108_813],
};

const ANTHROPIC_CASE: TierCase = {
  model: "test/anthropic-long",
  threshold: 100_000,
  prompt: " hello".repeat(120_000),
  reply: (promptTokens, stream) => {
    // Uncached input + 50,000 cache reads + 6,000 five-minute and 4,000 one-hour writes.
    const usage = buildUsage({
      input_tokens: promptTokens - 60_000,
      cache_read_input_tokens: 50_000,
      cache_creation_input_tokens: 10_000,
      cache_creation: { ephemeral_5m_input_tokens: 6_000, ephemeral_1h_input_tokens: 4_000 },
      output_tokens: OUTPUT_TOKENS,
    });
    return stream
      ? anthropicReply.sse(
          buildTextStream(["Hel", "lo"], {
            startUsage: Object.assign({}, usage, { output_tokens: 1 }),
            deltaUsage: { output_tokens: OUTPUT_TOKENS },
          }),
        )
      : anthropicReply.json(buildMessage({ usage }));
  },
  // $0.10 in / $0.50 out / $0.01 read / $0.125 5-minute / $0.20 1-hour write; above 100,000: 5×.
  // 40,000 × 0.1 + 50,000 × 0.01 + 6,000 × 0.125 + 4,000 × 0.2 + 10 × 0.5 = 6,055;
  // 40,001 × 0.5 + 50,000 × 0.05 + 6,000 × 0.625 + 4,000 × 1 + 10 × 2.5 = 30,275.5 → 30,276.
  costs: [6_055, 30_276],
};

const GOOGLE_CASE: TierCase = {
  model: "test/google-long",
  threshold: 200_000,
  // 1.25 × about 200,000 o200k tokens: the bound passes the threshold.
  prompt: " hello".repeat(200_000),
  reply: (promptTokens, stream) => {
    const usage = {
      promptTokenCount: promptTokens,
      cachedContentTokenCount: 50_000,
      candidatesTokenCount: OUTPUT_TOKENS,
      totalTokenCount: promptTokens + OUTPUT_TOKENS,
    };
    return stream
      ? fakeGoogleReply.sse(buildGeminiTextChunks(["Hel", "lo"], { usage }))
      : fakeGoogleReply.json(buildGenerateContentResponse({ usage }));
  },
  // $1.25 in / $10 out / $0.125 cached; above 200,000: $2.50 / $15 / $0.25.
  // 150,000 × 1.25 + 50,000 × 0.125 + 10 × 10 = 193,850;
  // 150,001 × 2.5 + 50,000 × 0.25 + 10 × 15 = 387,652.5 → 387,653.
  costs: [193_850, 387_653],
};

async function recordedCost(context: TestGateway, requestId: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${requestId}`, {
      headers: { Authorization: `Bearer ${context.apiKey}` },
    });
    const { data } = (await response.json()) as { data?: { status: string; cost_micro_usd: string } };
    if (data !== undefined && data.status !== "in_progress") return Number(data.cost_micro_usd);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no final record for ${requestId}`);
}

type Ask = (context: TestGateway, model: string, prompt: string, stream: boolean) => Promise<string>;

const FORMATS: Record<string, Ask> = {
  "chat completions": async (context, model, prompt, stream) => {
    const body = { model, messages: [{ role: "user" as const, content: prompt }], max_tokens: 100 };
    if (!stream) {
      const { response } = await context.openai.chat.completions.create(body).withResponse();
      return response.headers.get("x-request-id")!;
    }
    const { data, response } = await context.openai.chat.completions
      .create({ ...body, stream: true })
      .withResponse();
    for await (const _chunk of data);
    return response.headers.get("x-request-id")!;
  },
  responses: async (context, model, prompt, stream) => {
    const body = { model, input: prompt, max_output_tokens: 100 };
    if (!stream) {
      const { response } = await context.openai.responses.create(body).withResponse();
      return response.headers.get("x-request-id")!;
    }
    const { data, response } = await context.openai.responses
      .create({ ...body, stream: true })
      .withResponse();
    for await (const _event of data);
    return response.headers.get("x-request-id")!;
  },
  messages: async (context, model, prompt, stream) => {
    const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
    const body = { model, max_tokens: 100, messages: [{ role: "user" as const, content: prompt }] };
    if (!stream) {
      const { response } = await anthropic.messages.create(body).withResponse();
      return response.headers.get("x-request-id")!;
    }
    const { data, response } = await anthropic.messages.create({ ...body, stream: true }).withResponse();
    for await (const _event of data);
    return response.headers.get("x-request-id")!;
  },
};

/** Both sides of the case's threshold, in every format, streamed and not. */
async function checkBoundary(
  t: TestContext,
  context: TestGateway,
  tier: TierCase,
  enqueue: (reply: FakeReply) => void,
): Promise<void> {
  for (const [format, ask] of Object.entries(FORMATS)) {
    for (const stream of [false, true]) {
      await t.test(`${format}, ${stream ? "streamed" : "not streamed"}`, async () => {
        for (const [offset, expected] of [
          [0, tier.costs[0]],
          [1, tier.costs[1]],
        ]) {
          enqueue(tier.reply(tier.threshold + offset, stream));
          const requestId = await ask(context, tier.model, tier.prompt, stream);
          assert.equal(
            await recordedCost(context, requestId),
            expected,
            `${tier.threshold + offset} prompt tokens`,
          );
        }
      });
    }
  }
}

const openAiOverrides = (upstreamBaseUrl: string) => ({
  providers: [
    { id: "fake", kind: "openai-compatible", base_url: upstreamBaseUrl, api_key_env: "FAKE_UPSTREAM_KEY" },
  ],
  models: [
    catalogModel(OPENAI_CASE.model, "fake", {
      prompt: "0.2",
      completion: "0.8",
      cached_prompt: "0.05",
      tiers: [{ above_prompt_tokens: 272_000, prompt: "0.4", completion: "1.2", cached_prompt: "0.1" }],
      // Announced for a day these tests never reach: shown, never applied.
      scheduled: [{ from: "2099-01-01", prompt: "0.3", completion: "0.9", cached_prompt: "0.06" }],
    }),
  ],
});

forEachGatewayMode(
  "OpenAI's rule: 272,000 prompt tokens bill the base prices, 272,001 the long-context tier's",
  (context, t) => checkBoundary(t, context, OPENAI_CASE, (reply) => context.upstream.enqueue(reply)),
  { configOverrides: openAiOverrides, credits: "100" },
);

test("Anthropic's and Gemini's rules: cache reads and writes count toward the threshold [embedded]", async (t) => {
  const anthropic = await startFakeAnthropicUpstream();
  const google = await startFakeGoogleUpstream();
  t.after(() => Promise.all([anthropic.close(), google.close()]));
  const context = await startTestGateway("embedded", {
    credits: "100",
    configOverrides: {
      providers: [
        { id: "anthropic", kind: "anthropic", base_url: anthropic.baseUrl },
        { id: "google", kind: "google", base_url: google.baseUrl },
      ],
      models: [
        catalogModel(ANTHROPIC_CASE.model, "anthropic", {
          prompt: "0.1",
          completion: "0.5",
          cached_prompt: "0.01",
          cache_write: "0.125",
          cache_write_1h: "0.2",
          tiers: [
            {
              above_prompt_tokens: 100_000,
              prompt: "0.5",
              completion: "2.5",
              cached_prompt: "0.05",
              cache_write: "0.625",
              cache_write_1h: "1",
            },
          ],
        }),
        catalogModel(GOOGLE_CASE.model, "google", {
          prompt: "1.25",
          completion: "10",
          cached_prompt: "0.125",
          tiers: [{ above_prompt_tokens: 200_000, prompt: "2.5", completion: "15", cached_prompt: "0.25" }],
        }),
      ],
    },
  });
  t.after(() => context.close());
  await t.test("Anthropic, 100,000 vs 100,001", (t) =>
    checkBoundary(t, context, ANTHROPIC_CASE, (reply) => anthropic.enqueue(reply)),
  );
  await t.test("Gemini, 200,000 vs 200,001", (t) =>
    checkBoundary(t, context, GOOGLE_CASE, (reply) => google.enqueue(reply)),
  );
});

forEachGatewayMode(
  "the catalog shows the tiers beside the spec's pricing",
  async (context) => {
    const response = await fetch(`${context.url}/api/v1/models/${encodeURIComponent(OPENAI_CASE.model)}`);
    const model = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(model.pricing, { prompt: 0.2, completion: 0.8, cached_prompt: 0.05 });
    assert.deepEqual(model.pricing_details, {
      tiers: [{ above_prompt_tokens: 272_000, prompt: 0.4, completion: 1.2, cached_prompt: 0.1 }],
      scheduled: [{ from: "2099-01-01", prompt: 0.3, completion: 0.9, cached_prompt: 0.06, tiers: [] }],
    });
  },
  { configOverrides: openAiOverrides },
);
