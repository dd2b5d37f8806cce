/**
 * Cost quotes end to end (docs/cost-quote.md): a generation request with `X-Hi-Dry-Run: 1` on each
 * of the three endpoints, streamed or not, answers the reservation the same request would make,
 * its prompt's cost at the bound, the price tier and whether each window and the balance admit it;
 * the upstream gets nothing, and nothing is reserved, recorded or counted (the key's one request
 * per minute is still free afterwards, its spend and reservations are 0, no record exists).
 */
import assert from "node:assert/strict";
import { forEachGatewayMode, TEST_MODEL, TEST_PRICES, type TestGateway } from "../helpers/test-gateway.js";

const TIERED_MODEL = "test/tiered-model";

/** The three endpoints, each with a body in its format asking for at most `maxTokens`. */
const FORMATS = {
  chat: (model: string, prompt: string, maxTokens?: number) => ({
    path: "/api/v1/chat/completions",
    body: { model, messages: [{ role: "user", content: prompt }], max_tokens: maxTokens },
  }),
  responses: (model: string, prompt: string, maxTokens?: number) => ({
    path: "/api/v1/responses",
    body: { model, input: prompt, max_output_tokens: maxTokens },
  }),
  messages: (model: string, prompt: string, maxTokens?: number) => ({
    path: "/api/v1/messages",
    // The messages format requires max_tokens; the model's maximum stands for "none".
    body: { model, messages: [{ role: "user", content: prompt }], max_tokens: maxTokens ?? 4096 },
  }),
};

async function quote(
  context: TestGateway,
  format: keyof typeof FORMATS,
  options: { model?: string; prompt?: string; maxTokens?: number; stream?: boolean; header?: string } = {},
) {
  const { path, body } = FORMATS[format](
    options.model ?? TEST_MODEL,
    options.prompt ?? "What does a dry run cost?",
    options.maxTokens,
  );
  const response = await fetch(`${context.url}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${context.apiKey}`,
      "Content-Type": "application/json",
      "X-Hi-Dry-Run": options.header ?? "1",
    },
    body: JSON.stringify(Object.assign(body, options.stream ? { stream: true } : {})),
  });
  return { response, json: (await response.json()) as QuoteDocument };
}

// biome-ignore lint/suspicious/noExplicitAny: the quote and error documents are read field by field.
type QuoteDocument = Record<string, any>;

const PICO = 1_000_000n;
/** $2/M prompt, $8/M completion: pico-USD per token equals the USD per million in micro. */
function expectedReservation(promptTokens: number, outputCap: number): number {
  const pico =
    BigInt(promptTokens) * BigInt(Number(TEST_PRICES.prompt) * 1e6) +
    BigInt(outputCap) * BigInt(Number(TEST_PRICES.completion) * 1e6);
  return Number((pico + PICO - 1n) / PICO);
}

forEachGatewayMode(
  "a dry run quotes the reservation in all three formats, calls no upstream and holds nothing",
  async (context) => {
    await context.admin.updateKey(context.keyId, { dailyLimitUsd: "1", requestsPerMinute: 1 });
    for (const format of Object.keys(FORMATS) as Array<keyof typeof FORMATS>) {
      for (const stream of [false, true]) {
        const { response, json } = await quote(context, format, { maxTokens: 100, stream });
        assert.equal(response.status, 200, JSON.stringify(json));
        assert.equal(response.headers.get("x-hi-dry-run"), "1");
        assert.match(
          response.headers.get("content-type") ?? "",
          /application\/json/,
          "a quote is never a stream",
        );
        assert.equal(json.object, "cost_quote");
        assert.equal(json.id, response.headers.get("x-request-id"));
        assert.equal(json.model, TEST_MODEL);
        assert.equal(json.output_cap, 100);
        assert.ok(json.prompt_tokens_bound > 0);
        assert.equal(json.reservation_micro_usd, String(expectedReservation(json.prompt_tokens_bound, 100)));
        assert.equal(
          json.prompt_cost_micro_usd,
          String(expectedReservation(json.prompt_tokens_bound, 0)),
          `${format}: the prompt's bound at the prompt price`,
        );
        assert.equal(json.pricing_tier, null);
        assert.equal(json.admitted, true);
        assert.equal(json.output_cap_lowered_to, null);
        assert.deepEqual(json.limits.daily, {
          limit_micro_usd: "1000000",
          remaining_micro_usd: "1000000",
          admits: true,
        });
        assert.equal(json.limits.monthly.remaining_micro_usd, null, "no monthly limit");
        assert.deepEqual(json.balance, { checked: true, available_micro_usd: "10000000", admits: true });
      }
    }
    // Six quotes: nothing reached the upstream, nothing is held or recorded.
    assert.equal(context.upstream.requests.length, 0);
    assert.deepEqual(await context.gateway.spendGuard.readReserved(context.workspaceId, context.keyId), {
      keyMicroUsd: 0,
      workspaceMicroUsd: 0,
    });
    assert.deepEqual(
      await context.gateway.store.reports.listGenerations({ workspaceId: context.workspaceId, limit: 10 }),
      [],
    );
    assert.equal(
      (await context.gateway.store.workspaces.get(context.workspaceId))?.balanceMicroUsd,
      10_000_000,
    );
    // No rate slot was taken: the key's one request per minute is still there.
    const real = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "now for real" }],
      max_tokens: 100,
    });
    assert.equal(real.object, "chat.completion");
    assert.equal(context.upstream.requests.length, 1);
  },
);

forEachGatewayMode(
  "a quote says which window refuses, and the lowered cap admission would send without a cap of the caller's",
  async (context) => {
    // $0.001 a day: 100 output tokens cost $0.0008 plus the prompt; 1,000 cost $0.008.
    await context.admin.updateKey(context.keyId, { dailyLimitUsd: "0.001" });
    const fits = await quote(context, "chat", { maxTokens: 100 });
    assert.equal(fits.json.admitted, true);
    const capped = await quote(context, "chat", { maxTokens: 1_000 });
    assert.equal(capped.json.admitted, false, "a cap the caller set is never lowered");
    assert.equal(capped.json.limits.daily.admits, false);
    assert.equal(capped.json.limits.monthly.admits, true);
    assert.equal(capped.json.output_cap_lowered_to, null);
    const uncapped = await quote(context, "responses");
    assert.equal(uncapped.json.output_cap, 4096);
    assert.equal(uncapped.json.output_cap_adjustable, true);
    assert.equal(uncapped.json.limits.daily.admits, false);
    assert.equal(uncapped.json.admitted, true);
    const lowered = uncapped.json.output_cap_lowered_to as number;
    // What the headroom affords once the prompt is paid: 1,000 µUSD at 8 µUSD per token.
    const promptMicro = Number(uncapped.json.prompt_cost_micro_usd);
    assert.ok(
      lowered >= 64 && lowered <= Math.floor(((1_000 - promptMicro + 1) * 1e6) / 8e6),
      String(lowered),
    );
    // A refusal before the reservation is the endpoint's own error, in its format.
    const unknown = await quote(context, "messages", { model: "test/no-such-model" });
    assert.equal(unknown.response.status, 400);
    assert.equal(unknown.json.type, "error");
    const badHeader = await quote(context, "chat", { header: "maybe" });
    assert.equal(badHeader.response.status, 400);
    assert.equal(badHeader.json.error.param, "X-Hi-Dry-Run");
    assert.equal(context.upstream.requests.length, 0);
  },
);

forEachGatewayMode(
  "a quote names the price tier a long prompt reaches",
  async (context) => {
    const short = await quote(context, "messages", { model: TIERED_MODEL, maxTokens: 10 });
    assert.equal(short.json.pricing_tier, null);
    const long = await quote(context, "chat", {
      model: TIERED_MODEL,
      prompt: " hello".repeat(2_000),
      maxTokens: 10,
    });
    assert.deepEqual(long.json.pricing_tier, { above_prompt_tokens: 1_000 });
    // The tier's prices: $4/M prompt, $16/M completion.
    const tokens = long.json.prompt_tokens_bound as number;
    assert.equal(
      long.json.prompt_cost_micro_usd,
      String(Number((BigInt(tokens) * 4_000_000n + PICO - 1n) / PICO)),
    );
    assert.equal(
      long.json.reservation_micro_usd,
      String(Number((BigInt(tokens) * 4_000_000n + 10n * 16_000_000n + PICO - 1n) / PICO)),
    );
    assert.equal(context.upstream.requests.length, 0);
  },
  {
    configOverrides: (upstreamBaseUrl) => ({
      providers: [
        {
          id: "fake",
          kind: "openai-compatible",
          base_url: upstreamBaseUrl,
          api_key_env: "FAKE_UPSTREAM_KEY",
        },
      ],
      models: [
        {
          slug: TEST_MODEL,
          name: TEST_MODEL,
          provider: { slug: "test", name: "Test" },
          description: "base prices",
          context_length: 128_000,
          max_output_tokens: 4096,
          pricing: TEST_PRICES,
          features: ["streaming"],
          datacenter_locations: ["local"],
          routes: [{ provider: "fake", model: "fake-upstream-model" }],
        },
        {
          slug: TIERED_MODEL,
          name: TIERED_MODEL,
          provider: { slug: "test", name: "Test" },
          description: "priced by prompt size",
          context_length: 128_000,
          max_output_tokens: 4096,
          pricing: Object.assign({}, TEST_PRICES, {
            tiers: [{ above_prompt_tokens: 1_000, prompt: "4", completion: "16", cached_prompt: "1" }],
          }),
          features: ["streaming"],
          datacenter_locations: ["local"],
          routes: [{ provider: "fake", model: "fake-tiered-model" }],
        },
      ],
    }),
  },
);
