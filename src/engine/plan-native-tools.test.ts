/**
 * Where each activated tool runs per route (plan-native-tools.ts), with the real toolbox: the
 * catalog's declaration and the adapter's capabilities decide, a kind that cannot mix its own tools
 * with function tools gets the gateway's, routes that can serve neither way are dropped, and the
 * tools the plan does not decide (datetime, pdf) are left to the toolbox.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type { CanonicalRequest, ServerToolActivation, ServerToolId } from "../canonical/index.js";
import { buildConfig } from "../config/load-config.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { NativeToolSupport, ProviderAdapter } from "../providers/provider-adapter.js";
import { createServerTools } from "../server-tools/toolbox/index.js";
import { addNativeRoundCost, SEARCH_RESULT_TOKENS } from "./bound-native-round.js";
import { planNativeTools } from "./plan-native-tools.js";
import { listRouteCandidates } from "./route-candidates.js";

const MIXES: NativeToolSupport = {
  allowedDomains: true,
  blockedDomains: false,
  bothDomainLists: false,
  withFunctionTools: true,
};
const ALONE: NativeToolSupport = { ...MIXES, allowedDomains: false, withFunctionTools: false };

function setUp(options: { backend?: boolean } = {}) {
  const config = buildConfig(
    {
      providers: [
        { id: "mixing", kind: "openai-responses", base_url: "http://127.0.0.1:9/a" },
        { id: "alone", kind: "google", base_url: "http://127.0.0.1:9/b" },
        { id: "none", kind: "openai-compatible", base_url: "http://127.0.0.1:9/c" },
      ],
      models: [
        {
          slug: "test/model",
          name: "m",
          provider: { slug: "test", name: "Test" },
          description: "",
          context_length: 100_000,
          max_output_tokens: 1_000,
          pricing: { prompt: "1", completion: "2" },
          features: ["tools"],
          datacenter_locations: ["local"],
          native_server_tools: { web_search: { price_per_call_usd: "0.01" } },
          routes: [
            { provider: "mixing", model: "a" },
            { provider: "alone", model: "b" },
            { provider: "none", model: "c" },
          ],
        },
      ],
      server_tools: options.backend
        ? {
            web_search: {
              backends: [{ id: "s", kind: "searxng", base_url: "http://127.0.0.1:9", price_per_call_usd: 0 }],
            },
          }
        : {},
    },
    {},
  );
  const adapters = new Map([
    ["openai-responses", { nativeServerTools: { web_search: MIXES } }],
    ["google", { nativeServerTools: { web_search: ALONE } }],
    ["openai-compatible", {}],
  ]) as unknown as Map<never, ProviderAdapter>;
  const serverTools = createServerTools(config.serverTools!, { env: {} });
  const candidates = listRouteCandidates(config.models);
  const plan = (request: Partial<CanonicalRequest>, droppable?: ReadonlySet<ServerToolId>) =>
    planNativeTools({
      request: createTestRequest({ model: "test/model", ...request }),
      candidates,
      adapters,
      serverTools,
      maxCallsPerRound: 5,
      droppable,
    });
  return { plan, candidates, config };
}

const search = (parameters?: Record<string, unknown>): ServerToolActivation => ({
  id: "web_search",
  maxUses: 1000,
  events: false,
  param: "tools[0]",
  ...(parameters === undefined ? {} : { parameters }),
});
const datetime: ServerToolActivation = { id: "datetime", maxUses: 1000, events: false, param: "tools[1]" };

test("with the gateway's backend, each route runs the search where it can: natively or in the gateway", () => {
  const { plan, candidates } = setUp({ backend: true });
  const result = plan({ serverTools: [search()] });
  assert.equal(result.candidates.length, 3);
  assert.deepEqual([...result.nativeEverywhere], []);
  assert.deepEqual(
    candidates.map((candidate) => result.toolsFor(candidate).map((tool) => tool.tool)),
    [["web_search"], ["web_search"], []],
  );
  // A kind that cannot mix its own tools with functions gets the gateway's tool beside the caller's.
  const withFunctions = plan({ serverTools: [search()], tools: [{ name: "lookup" }] });
  assert.deepEqual(
    candidates.map((candidate) => withFunctions.toolsFor(candidate).length),
    [1, 0, 0],
  );
  // …and beside another activated tool the gateway runs.
  const withDatetime = plan({ serverTools: [search(), datetime] });
  assert.deepEqual(
    candidates.map((candidate) => withDatetime.toolsFor(candidate).length),
    [1, 0, 0],
  );
  // A domain list only some providers apply: the others get the gateway's tool.
  const allowed = plan({ serverTools: [search({ allowed_domains: ["example.com"] })] });
  assert.deepEqual(allowed.toolsFor(candidates[0])[0].allowedDomains, ["example.com"]);
  assert.equal(allowed.toolsFor(candidates[1]).length, 0);
});

test("without the gateway's backend, routes that cannot run the search natively are dropped", () => {
  const { plan, candidates } = setUp();
  const result = plan({ serverTools: [search()] });
  assert.deepEqual(result.candidates, candidates.slice(0, 2));
  assert.deepEqual([...result.nativeEverywhere], ["web_search"]);
  assert.deepEqual(
    plan({ serverTools: [search()], tools: [{ name: "lookup" }] }).candidates,
    candidates.slice(0, 1),
  );
  // No route left: the gateway's own refusal, naming the activation.
  assert.throws(
    () => plan({ serverTools: [search({ blocked_domains: ["x.example"] })] }),
    (error: GatewayError) => error.code === "invalid_request" && error.param === "tools[0]",
  );
});

test("a droppable search (a client's default, no backend here) runs natively where it can and is left out elsewhere; no route is refused", () => {
  const { plan, candidates } = setUp();
  const result = plan({ serverTools: [search()], tools: [{ name: "lookup" }] }, new Set(["web_search"]));
  assert.deepEqual(result.candidates, candidates, "every route stays");
  assert.deepEqual(
    candidates.map((candidate) => result.toolsFor(candidate).map((tool) => tool.tool)),
    [["web_search"], [], []],
  );
  assert.deepEqual(
    candidates.map((candidate) => result.droppedFor(candidate).map((activation) => activation.id)),
    [[], ["web_search"], ["web_search"]],
  );
  // Alone in the request, the kind that cannot mix its tools with functions runs it too.
  const alone = plan({ serverTools: [search()] }, new Set(["web_search"]));
  assert.deepEqual(
    candidates.map((candidate) => alone.droppedFor(candidate).length),
    [0, 0, 1],
  );
});

test("engine native keeps the routes that run it; engine gateway never runs it natively; datetime and pdf are left to the toolbox", () => {
  const { plan, candidates } = setUp({ backend: true });
  assert.deepEqual(plan({ serverTools: [search({ engine: "native" })] }).candidates, candidates.slice(0, 2));
  const gateway = plan({ serverTools: [search({ engine: "gateway" })] });
  assert.equal(gateway.candidates.length, 3);
  assert.ok(candidates.every((candidate) => gateway.toolsFor(candidate).length === 0));
  const others = plan({
    serverTools: [
      datetime,
      { id: "pdf", maxUses: 1000, events: false, param: "plugins[0]", parameters: { engine: "text" } },
    ],
  });
  assert.equal(others.candidates.length, 3, "pdf's own engine option is not this plan's");
});

test("a native round holds its calls' prices and one pass per call over the prompt and the results so far", () => {
  const { config } = setUp();
  const model = config.models[0];
  const worst = {
    inputTokens: 1_000,
    inputPicoUsd: 1_000n * 1_000_000n,
    inputTokenPicoUsd: 1_000_000n,
    outputTokenPicoUsd: 2_000_000n,
    outputCap: 1_000,
    amountMicroUsd: 1_000 + 2_000,
  };
  const request = createTestRequest({ nativeServerTools: [{ tool: "web_search", maxUses: 2 }] });
  const passes = 1_000 + SEARCH_RESULT_TOKENS + (1_000 + 2 * SEARCH_RESULT_TOKENS);
  assert.equal(addNativeRoundCost(worst, request, model).amountMicroUsd, 3_000 + passes + 2 * 10_000);
  // No pass reads more than the context window.
  const small = { ...model, contextLength: 15_000 };
  assert.equal(
    addNativeRoundCost(worst, request, small).amountMicroUsd,
    3_000 + (1_000 + SEARCH_RESULT_TOKENS) + 15_000 + 2 * 10_000,
  );
  assert.equal(
    addNativeRoundCost(worst, createTestRequest(), model),
    worst,
    "nothing to add without native tools",
  );
  // A fetch's results are bounded by the text cap sent with it.
  const fetch = createTestRequest({
    nativeServerTools: [{ tool: "web_fetch", maxUses: 1, maxContentTokens: 2_000 }],
  });
  assert.equal(addNativeRoundCost(worst, fetch, model).amountMicroUsd, 3_000 + 1_000 + 2_000 + 500);
});
