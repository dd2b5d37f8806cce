/**
 * Price tiers end to end: a model priced like OpenAI's long-context models (above 272,000 prompt
 * tokens every rate of the request is dearer) behind a real gateway, asked in the three formats,
 * streamed and not, with the fake upstream reporting 272,000 and 272,001 prompt tokens. The
 * generation record's cost is the base tier's at the threshold and the long tier's one token
 * past it; the prompt is large enough that its reservation reaches the long tier, so the bill
 * is never capped by it.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, type TestGateway } from "../helpers/test-gateway.js";

const MODEL = "test/long-context";
const THRESHOLD = 272_000;
const OUTPUT_TOKENS = 10;
// $0.20 / $0.80 / $0.05 per 1M tokens, and $0.40 / $1.20 / $0.10 above 272,000 prompt tokens.
const BASE_COST = THRESHOLD * 0.2 + OUTPUT_TOKENS * 0.8; // 54,408 µUSD
const LONG_COST = Math.ceil((THRESHOLD + 1) * 0.4 + OUTPUT_TOKENS * 1.2); // 108,812.4 → 108,813 µUSD
// About 300,000 o200k tokens: the reservation's bound passes the threshold.
const LONG_PROMPT = " hello".repeat(300_000);

const configOverrides = (upstreamBaseUrl: string) => ({
  providers: [
    { id: "fake", kind: "openai-compatible", base_url: upstreamBaseUrl, api_key_env: "FAKE_UPSTREAM_KEY" },
  ],
  models: [
    {
      slug: MODEL,
      name: "Long context",
      provider: { slug: "test", name: "Test" },
      description: "priced by prompt size",
      context_length: 400_000,
      max_output_tokens: 1_000,
      pricing: {
        prompt: "0.2",
        completion: "0.8",
        cached_prompt: "0.05",
        tiers: [{ above_prompt_tokens: THRESHOLD, prompt: "0.4", completion: "1.2", cached_prompt: "0.1" }],
      },
      features: ["streaming"],
      datacenter_locations: ["local"],
      routes: [{ provider: "fake", model: "fake-long-model" }],
    },
  ],
});

const usage = (promptTokens: number) => ({
  prompt_tokens: promptTokens,
  completion_tokens: OUTPUT_TOKENS,
  total_tokens: promptTokens + OUTPUT_TOKENS,
});

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

type Ask = (context: TestGateway, stream: boolean) => Promise<string>;

const formats: Record<string, Ask> = {
  "chat completions": async (context, stream) => {
    const body = {
      model: MODEL,
      messages: [{ role: "user" as const, content: LONG_PROMPT }],
      max_tokens: 100,
    };
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
  responses: async (context, stream) => {
    const body = { model: MODEL, input: LONG_PROMPT, max_output_tokens: 100 };
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
  messages: async (context, stream) => {
    const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
    const body = {
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: "user" as const, content: LONG_PROMPT }],
    };
    if (!stream) {
      const { response } = await anthropic.messages.create(body).withResponse();
      return response.headers.get("x-request-id")!;
    }
    const { data, response } = await anthropic.messages.create({ ...body, stream: true }).withResponse();
    for await (const _event of data);
    return response.headers.get("x-request-id")!;
  },
};

forEachGatewayMode(
  "272,000 prompt tokens bill the base prices, 272,001 the long-context tier's, in every format",
  async (context, t) => {
    for (const [format, ask] of Object.entries(formats)) {
      for (const stream of [false, true]) {
        await t.test(`${format}, ${stream ? "streamed" : "not streamed"}`, async () => {
          for (const [promptTokens, expected] of [
            [THRESHOLD, BASE_COST],
            [THRESHOLD + 1, LONG_COST],
          ]) {
            context.upstream.enqueue(
              stream
                ? fakeReply.sse(buildTextChunks(["Hel", "lo"], { usage: usage(promptTokens) }))
                : fakeReply.json(buildChatCompletion({ usage: usage(promptTokens) })),
            );
            const requestId = await ask(context, stream);
            assert.equal(await recordedCost(context, requestId), expected, `${promptTokens} prompt tokens`);
          }
        });
      }
    }
  },
  { configOverrides, credits: "100" },
);

forEachGatewayMode(
  "the catalog shows the tiers beside the spec's pricing",
  async (context) => {
    const response = await fetch(`${context.url}/api/v1/models/${encodeURIComponent(MODEL)}`);
    const model = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(model.pricing, { prompt: 0.2, completion: 0.8, cached_prompt: 0.05 });
    assert.deepEqual(model.pricing_details, {
      tiers: [{ above_prompt_tokens: THRESHOLD, prompt: 0.4, completion: 1.2, cached_prompt: 0.1 }],
    });
  },
  { configOverrides },
);
