import assert from "node:assert/strict";
import { test } from "node:test";
import { buildConfig } from "../config/load-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import { keepCandidatesWithKeys } from "./keyed-route-candidates.js";
import { listRouteCandidates } from "./route-candidates.js";

const provider = (id: string, variable?: string) => ({
  id,
  kind: "openai-compatible",
  base_url: `http://127.0.0.1:9/${id}`,
  ...(variable === undefined ? {} : { api_key_env: variable }),
});
const model = (slug: string, providers: string[]) => ({
  slug,
  name: slug,
  provider: { slug: "test", name: "Test" },
  description: "",
  context_length: 1000,
  max_output_tokens: 100,
  pricing: { prompt: "1", completion: "2" },
  features: ["streaming"],
  datacenter_locations: ["local"],
  routes: providers.map((id) => ({ provider: id, model: `${id}-model` })),
});
const CONFIG = buildConfig(
  {
    providers: [provider("a", "A_KEY"), provider("b", "B_KEY"), provider("c", "A_KEY"), provider("open")],
    models: [model("test/keyless", ["a", "b", "c"]), model("test/alt", ["b", "open"])],
  },
  { B_KEY: "set" },
);
const [keyless, alt] = CONFIG.models;

test("routes without their provider's key are left out, the order of the rest kept", () => {
  const kept = keepCandidatesWithKeys(listRouteCandidates([keyless, alt]));
  assert.deepEqual(
    kept.map((candidate) => candidate.key),
    ["b/b-model", "open/open-model"],
  );
  const all = listRouteCandidates([alt]);
  assert.equal(keepCandidatesWithKeys(all), all, "nothing to leave out: the same list, not a copy");
});

test("no route with a key: provider_auth naming every variable once, with its providers", () => {
  const noKeys = buildConfig(
    {
      providers: [provider("a", "A_KEY"), provider("c", "A_KEY"), provider("d", "D_KEY")],
      models: [model("test/m", ["a", "c", "d"])],
    },
    {},
  );
  assert.throws(
    () => keepCandidatesWithKeys(listRouteCandidates(noKeys.models)),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === "provider_auth" &&
      error.retryAfterSeconds === undefined &&
      error.message.includes('A_KEY (provider "a", "c") or D_KEY (provider "d") are not set') &&
      error.message.includes("Nothing was sent upstream"),
  );
});
