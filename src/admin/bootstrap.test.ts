import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestStore } from "../../test/helpers/storage-modes.js";
import { buildConfig } from "../config/load-config.js";
import { bootstrapEmbeddedWorkspace, describeStart } from "./bootstrap.js";

/** Two providers that need a key, one that needs none; `stranded/model` has only the first. */
function createConfig(env: Record<string, string>) {
  const model = (slug: string, providers: string[], completion: string) => ({
    slug,
    name: slug,
    provider: { slug: "x", name: "X" },
    description: "",
    release_date: "",
    context_length: 1000,
    max_output_tokens: 100,
    pricing: { prompt: "1", completion },
    features: [],
    datacenter_locations: [],
    routes: providers.map((provider) => ({ provider, model: "upstream" })),
  });
  const provider = (id: string, apiKeyEnv?: string) => ({
    id,
    kind: "openai-compatible",
    base_url: "http://127.0.0.1:9/v1",
    ...(apiKeyEnv ? { api_key_env: apiKeyEnv } : {}),
  });
  return buildConfig(
    {
      providers: [provider("alpha", "ALPHA_KEY"), provider("beta", "BETA_KEY"), provider("local")],
      models: [
        model("stranded/model", ["alpha"], "1"),
        model("beta/model", ["beta"], "2"),
        model("both/model", ["alpha", "beta"], "3"),
      ],
    },
    env,
  );
}

test("the start text: an example that can answer, providers without a key, how to mint a key", async (t) => {
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const { store } = context;

  const config = createConfig({ BETA_KEY: "b" });
  const firstStart = await bootstrapEmbeddedWorkspace(store, config);
  assert.ok(firstStart);
  const first = await describeStart(store, config, firstStart);
  assert.ok(first.includes(`  ${firstStart.secret}\n`));
  // The cheapest model that can answer, not the cheapest one (stranded/model has no key).
  assert.match(first, /Try it:[\s\S]*"model":"beta\/model"/);
  assert.match(
    first,
    /No API key for provider "alpha" \(ALPHA_KEY is unset\): 1 model cannot answer: stranded\/model\.\n/,
  );
  assert.equal(first.includes('"beta"'), false, "a provider with its key is not mentioned");
  assert.equal(first.includes("To mint"), false, "the first start printed a key");
  assert.equal(await bootstrapEmbeddedWorkspace(store, config), undefined, "bootstraps once");

  const later = await describeStart(store, config, undefined);
  assert.match(later, new RegExp(`npm run admin -- key create --workspace ${firstStart.workspaceId}\n`));

  const noKeys = createConfig({});
  const withoutKeys = await describeStart(store, noKeys, firstStart);
  assert.match(withoutKeys, /No provider API key is set, so no model can answer yet/);
  assert.match(withoutKeys, /Set one \(ALPHA_KEY, BETA_KEY\) and start the gateway again/);
  assert.match(withoutKeys, /export ALPHA_KEY=…\n {2}npm start\n[\s\S]*"model":"stranded\/model"/);
  assert.equal(/Try it:/.test(withoutKeys), false, "no example that would fail");
  assert.match(withoutKeys, /502 provider_auth/);
  assert.match(
    withoutKeys,
    /GATEWAY_CONFIG=config\/demo\.yaml npm start/,
    "the way to try it with no account",
  );
  assert.match(
    withoutKeys,
    /"beta" \(BETA_KEY is unset\): 2 models cannot answer: beta\/model, both\/model\./,
  );
});

test("a demo provider is named at every start as the local demo", async (t) => {
  const context = await createTestStore("embedded");
  t.after(() => context.cleanup());
  const { store } = context;
  const demo = buildConfig(
    {
      providers: [{ id: "demo", kind: "demo" }],
      models: [
        {
          slug: "demo/echo",
          name: "Echo",
          provider: { slug: "demo", name: "Demo" },
          description: "",
          context_length: 1000,
          max_output_tokens: 100,
          pricing: { prompt: "1", completion: "2" },
          features: ["streaming"],
          datacenter_locations: ["local"],
          routes: [{ provider: "demo", model: "echo" }],
        },
      ],
    },
    {},
  );
  const text = await describeStart(store, demo, await bootstrapEmbeddedWorkspace(store, demo));
  assert.match(text, /Provider "demo" is the local demo: demo\/echo answer with an echo made by the gateway/);
  assert.match(text, /"model":"demo\/echo"/, "the example uses a demo model: it needs no key");
});
