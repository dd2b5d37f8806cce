import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { stringify } from "yaml";
import { buildConfig, ConfigError, loadConfigFile } from "./load-config.js";
import { DEFAULT_CONFIG_PATH } from "./settings.js";

const provider = {
  id: "p",
  kind: "openai-compatible",
  base_url: "http://127.0.0.1:1/v1",
  api_key_env: "P_KEY",
};
const model = {
  slug: "acme/model-1",
  name: "Model 1",
  provider: { slug: "acme", name: "Acme" },
  description: "d",
  release_date: "2026-01-02",
  context_length: 1000,
  max_output_tokens: 100,
  pricing: { prompt: "0.075", completion: 0.3 },
  features: ["tools"],
  datacenter_locations: ["us"],
  routes: [{ provider: "p", model: "model-1" }],
};

test("the shipped catalog is valid and lists OpenAI, Anthropic and Google models with prices", () => {
  const config = loadConfigFile(DEFAULT_CONFIG_PATH, {});
  const creators = new Set(config.models.map((entry) => entry.slug.split("/")[0]));
  for (const creator of ["openai", "anthropic", "google"]) assert.ok(creators.has(creator), creator);
  for (const entry of config.models) {
    assert.ok(entry.prices.promptPicoUsd > 0n && entry.prices.completionPicoUsd > 0n, entry.slug);
    assert.ok(entry.contextLength > entry.maxOutputTokens, entry.slug);
    assert.ok(entry.routes.length > 0, entry.slug);
  }
});

test("prices become exact integer pico-USD per token; missing ones default sensibly", () => {
  const config = buildConfig({ providers: [provider], models: [model] }, { P_KEY: "secret" });
  const [entry] = config.models;
  assert.equal(entry.prices.promptPicoUsd, 75_000n);
  assert.equal(entry.prices.completionPicoUsd, 300_000n);
  assert.equal(entry.prices.cachedPromptPicoUsd, 75_000n, "cache reads default to the prompt price");
  assert.equal(entry.prices.cacheWrite1hPicoUsd, 75_000n);
  assert.equal(entry.routes[0].provider.apiKey, "secret");
  assert.equal(config.defaultWorkspaceCreditsMicroUsd, 5_000_000);
  assert.equal(config.maxBodyBytes, 10 * 1024 * 1024);
});

test("provider deadlines: a stalled route is left within seconds; a long first-byte setting keeps slow answers", () => {
  const defaults = buildConfig({ providers: [provider], models: [model] }, {}).models[0].routes[0].provider;
  assert.deepEqual(defaults.timeouts, {
    connectMs: 10_000,
    firstByteMs: 15_000,
    responseMs: 120_000,
    idleMs: 120_000,
  });
  const timeoutsOf = (timeouts: Record<string, number>) =>
    buildConfig({ providers: [Object.assign({}, provider, { timeouts })], models: [model] }, {}).models[0]
      .routes[0].provider.timeouts;
  // Written when first_byte_ms was the only head deadline: non-streamed answers keep that long.
  assert.equal(timeoutsOf({ first_byte_ms: 300_000 }).responseMs, 300_000);
  assert.equal(timeoutsOf({ first_byte_ms: 5_000, response_ms: 60_000 }).responseMs, 60_000);
});

test("cors.allowed_origins: any origin by default; listed origins as browsers send them", () => {
  assert.deepEqual(buildConfig({ providers: [provider], models: [model] }, {}).cors.allowedOrigins, ["*"]);
  const listed = buildConfig(
    {
      providers: [provider],
      models: [model],
      cors: { allowed_origins: ["https://App.example.com", "http://localhost:5173"] },
    },
    {},
  );
  assert.deepEqual(listed.cors.allowedOrigins, ["https://app.example.com", "http://localhost:5173"]);
  const off = buildConfig({ providers: [provider], models: [model], cors: { allowed_origins: [] } }, {});
  assert.deepEqual(off.cors.allowedOrigins, []);
});

test("image generation is configured exactly when an image provider can be called with the environment given", () => {
  const imageProvider = {
    id: "openai-images",
    kind: "openai",
    api_key_env: "IMAGES_KEY",
    model: "gpt-image-1",
    price_per_image_usd: "0.042",
  };
  const withImage = (providers: unknown[]) => ({
    providers: [provider],
    models: [model],
    server_tools: { image: { providers } },
  });
  assert.equal(buildConfig({ providers: [provider], models: [model] }, {}).imageGenerationConfigured, false);
  assert.equal(buildConfig(withImage([imageProvider]), {}).imageGenerationConfigured, false, "key unset");
  assert.equal(
    buildConfig(withImage([imageProvider]), { IMAGES_KEY: "" }).imageGenerationConfigured,
    false,
    "an empty key is no key",
  );
  const configured = buildConfig(withImage([imageProvider]), { IMAGES_KEY: "sk-images" });
  assert.equal(configured.imageGenerationConfigured, true);
  assert.equal(configured.serverTools?.image?.providers[0].price_per_image_usd, 42_000, "micro-USD");
  const { api_key_env: _, ...keyless } = imageProvider;
  assert.equal(
    buildConfig(withImage([imageProvider, { ...keyless, id: "local" }]), {}).imageGenerationConfigured,
    true,
    "a provider that needs no key (a self-hosted server) can be called",
  );
});

test("a bad config names the offending field", () => {
  const cases: Array<[unknown, RegExp]> = [
    [
      { providers: [provider], models: [{ ...model, pricing: { prompt: "abc", completion: 1 } }] },
      /models\[0\]\.pricing\.prompt/,
    ],
    [{ providers: [provider], models: [{ ...model, context_length: -5 }] }, /models\[0\]\.context_length/],
    [
      { providers: [provider], models: [{ ...model, routes: [{ provider: "nope", model: "x" }] }] },
      /models\[0\]\.routes\[0\]\.provider: unknown provider "nope"/,
    ],
    [{ providers: [{ ...provider, kind: "carrier-pigeon" }], models: [model] }, /providers\[0\]\.kind/],
    [{ providers: [provider], models: [model, model] }, /models\[1\]\.slug: duplicate slug/],
    [{ providers: [provider], models: [{ ...model, slug: "no-slash" }] }, /models\[0\]\.slug/],
    [
      { providers: [provider], models: [{ ...model, features: ["telepathy"] }] },
      /models\[0\]\.features\[0\]/,
    ],
    [
      { providers: [provider], models: [{ ...model, pricing: { prompt: "0.0000001", completion: 1 } }] },
      /more than 6 decimals/,
    ],
    [
      { providers: [provider], models: [model], cors: { allowed_origins: ["https://app.example.com/"] } },
      /cors\.allowed_origins\[0\]/,
    ],
    [
      { providers: [provider], models: [model], cors: { allowed_origins: ["*", "https://app.example.com"] } },
      /cors\.allowed_origins: `\*` stands alone/,
    ],
    [
      { providers: [provider], models: [model], server_tools: { image: { provider: "p", model: "m" } } },
      /server_tools\.image\.providers: /,
    ],
    [
      {
        providers: [provider],
        models: [model],
        server_tools: {
          image: { providers: [{ id: "o", kind: "openai", model: "gpt-image-1", price_per_image_usd: "x" }] },
        },
      },
      /server_tools\.image\.providers\[0\]\.price_per_image_usd/,
    ],
  ];
  for (const [raw, pattern] of cases) {
    assert.throws(
      () => buildConfig(raw, {}),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, pattern);
        return true;
      },
    );
  }
});

test("npm start with a bad config exits non-zero with a message naming the field", () => {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
  const path = join(dir, "bad.yaml");
  writeFileSync(
    path,
    stringify({ providers: [provider], models: [{ ...model, max_output_tokens: "lots" }] }),
  );
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, GATEWAY_CONFIG: path, GATEWAY_DATA_DIR: join(dir, "data"), PORT: "0" },
    encoding: "utf8",
    timeout: 90_000, // generous: tsx compiles the gateway on a possibly loaded machine
  });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /Invalid configuration: .*models\[0\]\.max_output_tokens/);
});

test("native_server_tools: each tool's price per call becomes exact integer micro-USD; a bad one names its field", () => {
  const config = buildConfig(
    {
      providers: [provider],
      models: [
        {
          ...model,
          native_server_tools: {
            web_search: { price_per_call_usd: "0.01" },
            web_fetch: { price_per_call_usd: 0 },
          },
        },
        { ...model, slug: "acme/model-2" },
      ],
      server_tools: { max_native_calls_per_round: 7 },
    },
    {},
  );
  assert.deepEqual(config.models[0].nativeServerTools, {
    web_search: { pricePerCallMicroUsd: 10_000 },
    web_fetch: { pricePerCallMicroUsd: 0 },
  });
  assert.deepEqual(config.models[1].nativeServerTools, {});
  assert.equal(config.serverTools?.maxNativeCallsPerRound, 7);
  assert.equal(
    buildConfig({ providers: [provider], models: [model] }, {}).serverTools?.maxNativeCallsPerRound,
    5,
  );

  assert.throws(
    () =>
      buildConfig(
        {
          providers: [provider],
          models: [{ ...model, native_server_tools: { web_search: { price_per_call_usd: "0.0000001" } } }],
        },
        {},
      ),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message.includes("models[0].native_server_tools.web_search.price_per_call_usd"),
  );
  assert.throws(
    () =>
      buildConfig(
        {
          providers: [provider],
          models: [{ ...model, native_server_tools: { datetime: { price_per_call_usd: 0 } } }],
        },
        {},
      ),
    (error: Error) => error instanceof ConfigError && error.message.includes("models[0].native_server_tools"),
  );
});

test("aliases: a name that would stand for two models, or take a slug or another model's name, is refused naming the field", () => {
  const other = { ...model, slug: "acme/model-2", routes: [{ provider: "p", model: "model-2" }] };
  const withAliases = (first: string[], second: string[], aliases?: Record<string, unknown>) => ({
    providers: [provider],
    models: [
      { ...model, aliases: first, family: "acme-models" },
      { ...other, aliases: second, family: "acme-models" },
    ],
    ...(aliases === undefined ? {} : { aliases }),
  });
  const cases: Array<[unknown, RegExp]> = [
    // Two models claim one alias.
    [
      withAliases(["m1"], ["m2", "m1"]),
      /models\[1\]\.aliases\[1\]: "m1" already names acme\/model-1 \(models\[0\]\.aliases\[0\]\)/,
    ],
    // An alias takes another model's bare name.
    [withAliases(["model-2"], []), /models\[0\]\.aliases\[0\]: "model-2" is the model part of acme\/model-2/],
    // The operator's name is a slug, or already an alias of another model.
    [withAliases([], [], { "acme/model-1": "acme/model-2" }), /aliases\.acme\/model-1: .* is a catalog slug/],
    [withAliases(["m1"], [], { m1: "acme/model-2" }), /aliases\.m1: "m1" already names acme\/model-1/],
    [withAliases(["m1"], [], { "acme/m1": "acme/model-2" }), /aliases\.acme\/m1: "acme\/m1" already names/],
    [
      withAliases([], [], { "model-1": "acme/model-2" }),
      /aliases\.model-1: .* is the model part of acme\/model-1/,
    ],
    // What the operator's name stands for must exist.
    [
      withAliases([], [], { fast: "acme/model-9" }),
      /aliases\.fast: no catalog model has the slug "acme\/model-9"/,
    ],
    [
      withAliases([], [], { fast: { family: "nope" } }),
      /aliases\.fast\.family: no catalog model has the family "nope"/,
    ],
    // Shapes: an alias has no slash; a family is lowercase.
    [withAliases(["acme/m1"], []), /models\[0\]\.aliases\[0\]: .*no slash/],
    [{ providers: [provider], models: [{ ...model, family: "Big Models" }] }, /models\[0\]\.family/],
  ];
  for (const [raw, pattern] of cases) {
    assert.throws(
      () => buildConfig(raw, {}),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, pattern);
        return true;
      },
    );
  }
  // Redundant names are not collisions: a model's alias equal to its own bare name, and an
  // operator's name for the model the alias already names.
  const config = buildConfig(withAliases(["model-1", "m1"], [], { m1: "acme/model-1" }), {});
  assert.equal(config.modelNames.byName.get("m1")?.slug, "acme/model-1");
});

test("an operator's name may settle a bare name two slugs share, for one of them", () => {
  const shared = (creator: string) => ({
    ...model,
    slug: `${creator}/shared`,
    routes: [{ provider: "p", model: "shared" }],
  });
  const ambiguous = buildConfig({ providers: [provider], models: [shared("a"), shared("b")] }, {});
  assert.deepEqual(
    ambiguous.modelNames.ambiguous.get("shared")?.map((entry) => entry.slug),
    ["a/shared", "b/shared"],
  );
  const settled = buildConfig(
    { providers: [provider], models: [shared("a"), shared("b")], aliases: { shared: "b/shared" } },
    {},
  );
  assert.equal(settled.modelNames.byName.get("shared")?.slug, "b/shared");
  assert.equal(settled.modelNames.ambiguous.size, 0);
});

test("the shipped catalog resolves the names Claude Code and Codex send by default", () => {
  const config = loadConfigFile(DEFAULT_CONFIG_PATH, {});
  const resolved = (name: string) => config.modelNames.byName.get(name)?.slug;
  // Claude Code 2.1.332: no --model and `opus`, `sonnet`, `haiku`, and the ids it sends for them.
  assert.equal(resolved("claude-opus-5-5"), "anthropic/claude-opus-5.5");
  assert.equal(resolved("claude-sonnet-5-5"), "anthropic/claude-sonnet-5.5");
  assert.equal(resolved("claude-haiku-5-5"), "anthropic/claude-haiku-5.5");
  assert.equal(resolved("opus"), "anthropic/claude-opus-5.5");
  assert.equal(resolved("sonnet"), "anthropic/claude-sonnet-5.5");
  assert.equal(resolved("haiku"), "anthropic/claude-haiku-5.5");
  // Codex CLI 0.171's default model.
  assert.equal(resolved("gpt-6.2-sol"), "openai/gpt-6.2-sol");
  // The providers' own ids of the other models, and a dated snapshot.
  assert.equal(resolved("claude-sonnet-4-6"), "anthropic/claude-sonnet-4.6");
  assert.equal(resolved("claude-haiku-4-5-20251001"), "anthropic/claude-haiku-4.5");
  assert.equal(config.modelNames.ambiguous.size, 0);
  // Every model's route id is one of its names, so a client that sends the provider's id finds it.
  for (const entry of config.models) {
    for (const route of entry.routes)
      assert.equal(resolved(route.upstreamModel), entry.slug, route.upstreamModel);
  }
});

test("base_url is required for every provider kind but demo, which calls nothing", () => {
  const model = {
    slug: "demo/echo",
    name: "Echo",
    provider: { slug: "demo", name: "Demo" },
    description: "",
    context_length: 1000,
    max_output_tokens: 100,
    pricing: { prompt: "1", completion: "2" },
    features: ["streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider: "p", model: "m" }],
  };
  assert.equal(
    buildConfig({ providers: [{ id: "p", kind: "demo" }], models: [model] }, {}).providers[0].kind,
    "demo",
  );
  assert.throws(
    () => buildConfig({ providers: [{ id: "p", kind: "anthropic" }], models: [model] }, {}),
    /providers\[0\]\.base_url: required for this kind/,
  );
});
