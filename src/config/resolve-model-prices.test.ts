import assert from "node:assert/strict";
import { test } from "node:test";
import { buildConfig, ConfigError, loadConfigFile } from "./load-config.js";
import { DEFAULT_CONFIG_PATH } from "./settings.js";

const provider = { id: "p", kind: "openai-responses", base_url: "http://127.0.0.1:1/v1" };

function modelWithPricing(pricing: Record<string, unknown>) {
  return {
    slug: "acme/long",
    name: "Long",
    provider: { slug: "acme", name: "Acme" },
    description: "d",
    context_length: 1_000_000,
    max_output_tokens: 1000,
    pricing,
    features: [],
    datacenter_locations: [],
    routes: [{ provider: "p", model: "long" }],
  };
}

const build = (pricing: Record<string, unknown>) =>
  buildConfig({ providers: [provider], models: [modelWithPricing(pricing)] }, {});

test("tiers and retention prices become integer prices; the catalog keeps the figures as written", () => {
  const config = build({
    prompt: 2,
    completion: 10,
    cached_prompt: "0.1",
    cache_write: 2.5,
    cache_write_12h: 5,
    checked_on: "2026-11-27",
    tiers: [
      {
        above_prompt_tokens: 272_000,
        prompt: 4,
        completion: 15,
        cached_prompt: 0.2,
        cache_write: 5,
        cache_write_12h: 10,
      },
    ],
  });
  const [model] = config.models;
  assert.equal(
    model.prices.cacheWrite1hPicoUsd,
    5_000_000n,
    "the 12-hour write is the extended-retention price",
  );
  assert.deepEqual(model.prices.tiers, [
    {
      abovePromptTokens: 272_000,
      prices: {
        promptPicoUsd: 4_000_000n,
        completionPicoUsd: 15_000_000n,
        cachedPromptPicoUsd: 200_000n,
        cacheWritePicoUsd: 5_000_000n,
        cacheWrite1hPicoUsd: 10_000_000n,
      },
    },
  ]);
  assert.equal(model.pricingUsdPerMillion.checkedOn, "2026-11-27");
  assert.equal(model.pricingUsdPerMillion.cacheWrite12h, 5);
  assert.equal(model.pricingUsdPerMillion.tiers?.[0]?.pricing.completion, 15);
});

test("a model without tiers has none", () => {
  assert.equal(build({ prompt: 1, completion: 2 }).models[0].prices.tiers, undefined);
});

test("refused: tiers out of order, beyond the context, or missing a class the base gives; two extended retentions", () => {
  const tier = (above: number, extra: Record<string, unknown> = {}) =>
    Object.assign({ above_prompt_tokens: above, prompt: 2, completion: 2 }, extra);
  assert.throws(
    () => build({ prompt: 1, completion: 1, tiers: [tier(200_000), tier(100_000)] }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /tiers\[1\]\.above_prompt_tokens: tiers go in ascending order/.test(error.message),
  );
  assert.throws(
    () => build({ prompt: 1, completion: 1, tiers: [tier(1_000_000)] }),
    /tiers\[0\]\.above_prompt_tokens: 1000000 is not below context_length/,
  );
  assert.throws(
    () => build({ prompt: 1, completion: 1, cached_prompt: 0.1, tiers: [tier(200_000)] }),
    /models\[0\]\.pricing\.tiers\[0\]\.cached_prompt: required, since the base pricing gives cached_prompt/,
  );
  assert.throws(
    () => build({ prompt: 1, completion: 1, tiers: [tier(200_000, { cache_write: 2 })] }),
    /tiers\[0\]\.cache_write: the base pricing gives no cache_write/,
  );
  assert.throws(
    () => build({ prompt: 1, completion: 1, cache_write_1h: 2, cache_write_12h: 2 }),
    /cache_write_12h: a model has one extended cache retention/,
  );
});

test("the shipped catalog: OpenAI's models double above 272K prompt tokens, Haiku 5.5 quintuples above 100K; every price dated", () => {
  const config = loadConfigFile(DEFAULT_CONFIG_PATH, {});
  for (const model of config.models) {
    assert.match(model.pricingUsdPerMillion.checkedOn ?? "", /^\d{4}-\d{2}-\d{2}$/, model.slug);
    const base = model.prices;
    for (const tier of base.tiers ?? []) {
      assert.ok(tier.prices.promptPicoUsd > base.promptPicoUsd, model.slug);
      assert.ok(tier.prices.completionPicoUsd > base.completionPicoUsd, model.slug);
    }
    if (model.slug.startsWith("openai/")) {
      const [tier] = base.tiers ?? [];
      assert.equal(tier?.abovePromptTokens, 272_000, model.slug);
      assert.equal(tier.prices.promptPicoUsd, base.promptPicoUsd * 2n, model.slug);
      assert.equal(tier.prices.cachedPromptPicoUsd, base.cachedPromptPicoUsd * 2n, model.slug);
      assert.equal(tier.prices.cacheWritePicoUsd, base.cacheWritePicoUsd * 2n, model.slug);
      assert.equal(tier.prices.cacheWrite1hPicoUsd, base.cacheWrite1hPicoUsd * 2n, model.slug);
      assert.equal(tier.prices.completionPicoUsd * 2n, base.completionPicoUsd * 3n, model.slug);
    }
  }
  const haiku = config.models.find((model) => model.slug === "anthropic/claude-haiku-5.5");
  const [tier] = haiku?.prices.tiers ?? [];
  assert.equal(tier?.abovePromptTokens, 100_000);
  assert.equal(tier.prices.promptPicoUsd, 5n * (haiku?.prices.promptPicoUsd ?? 0n));
  assert.equal(tier.prices.cacheWrite1hPicoUsd, 5n * (haiku?.prices.cacheWrite1hPicoUsd ?? 0n));
});

test("scheduled changes: resolved from 00:00 UTC of their date, ascending, shown in the catalog", () => {
  const config = build({
    prompt: "0.75",
    completion: "3.75",
    cached_prompt: "0.075",
    scheduled: [{ from: "2027-01-01", prompt: "1.5", completion: "7.5", cached_prompt: "0.15" }],
  });
  const [model] = config.models;
  assert.equal(model.prices.scheduled?.[0]?.fromMs, Date.parse("2027-01-01T00:00:00Z"));
  assert.equal(model.prices.scheduled?.[0]?.prices.cachedPromptPicoUsd, 150_000n);
  assert.deepEqual(model.pricingUsdPerMillion.scheduled, [
    {
      from: "2027-01-01",
      tiers: [],
      prompt: 1.5,
      completion: 7.5,
      cachedPrompt: 0.15,
      cacheWrite: undefined,
      cacheWrite1h: undefined,
      cacheWrite12h: undefined,
    },
  ]);
  assert.throws(
    () =>
      build({
        prompt: 1,
        completion: 1,
        scheduled: [
          { from: "2027-02-01", prompt: 2, completion: 2 },
          { from: "2027-01-01", prompt: 3, completion: 3 },
        ],
      }),
    /scheduled\[1\]\.from: changes go in ascending order/,
  );
  const shipped = loadConfigFile(DEFAULT_CONFIG_PATH, {}).models.find(
    (entry) => entry.slug === "google/gemini-3.8-flash",
  );
  assert.equal(shipped?.prices.scheduled?.[0]?.prices.promptPicoUsd, 1_500_000n);
});
