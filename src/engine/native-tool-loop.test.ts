/**
 * Server tools a provider runs itself, through the engine with the real toolbox and scripted
 * models (one canned answer per round), streamed and not: where each tool runs per route, what the
 * upstream is sent (its native tools instead of their definitions, the calls left), what the
 * client sees (the provider's calls and results, never its records), the price per call from the
 * catalog, a paused turn resumed within the bounds of rounds and spend, and failover to a route
 * whose provider cannot run the tool.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type {
  CanonicalRequest,
  CanonicalResult,
  CanonicalStreamPart,
  OpaqueReasoningState,
  ResultContent,
  ServerToolActivation,
} from "../canonical/index.js";
import { buildConfig } from "../config/load-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import type { NativeToolSupport, ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import { convertResultToParts } from "../providers/shared/convert-result-to-parts.js";
import { createServerTools } from "../server-tools/toolbox/index.js";
import type { SettledGeneration } from "./admitted-generation.js";
import { GenerationEngine } from "./generation-engine.js";
import type { GenerationOutcome } from "./generation-record.js";
import type { GenerationRun } from "./generation-run.js";
import type { AdmittedCaller } from "./ports.js";

const USAGE = {
  inputTokens: 1_000,
  outputTokens: 500,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};
/** USAGE at $1 / $2 per 1M tokens. */
const ROUND_COST = 1_000 + 1_000;
/** The catalog's price of one native search ("0.01"). */
const SEARCH_PRICE = 10_000;

const SUPPORT: NativeToolSupport = {
  allowedDomains: true,
  blockedDomains: true,
  bothDomainLists: false,
  withFunctionTools: true,
};

type Round =
  | { content: ResultContent[]; finish?: CanonicalResult["finishReason"] }
  | { fail: () => GatewayError };

const state = (block: Record<string, unknown>): OpaqueReasoningState => ({
  providerKind: "anthropic",
  upstreamModel: "native-upstream",
  nativeBlock: JSON.stringify(block),
});
/** The provider's own search call and, unless `answered` is false, its result. */
const nativeSearch = (id: string, query: string, answered = true): ResultContent[] => {
  const call: ResultContent = {
    type: "server-tool-call",
    call: { id, tool: "web_search", input: { query }, events: false },
    providerState: state({
      type: "server_tool_use",
      id: `srvtoolu_${id}`,
      name: "web_search",
      input: { query },
    }),
  };
  return answered ? [call, nativeResult(id)] : [call];
};
const nativeResult = (id: string, failed = false): ResultContent => ({
  type: "server-tool-result",
  result: {
    callId: id,
    tool: "web_search",
    input: {},
    ...(failed
      ? { status: "failed" as const, error: { code: "unavailable" as const, message: "down" } }
      : {
          status: "completed" as const,
          output: {
            kind: "search" as const,
            query: "",
            sources: [{ url: "https://example.com/fr", title: "France", snippet: "", pageAge: null }],
          },
        }),
    costMicroUsd: 0,
    durationMs: 0,
    events: false,
  },
  providerState: state({ type: "web_search_tool_result", tool_use_id: `srvtoolu_${id}`, content: [] }),
});
const say = (text: string): ResultContent => ({ type: "text", text });
const cited = (text: string): ResultContent => ({
  type: "text",
  text,
  citations: [
    { url: "https://example.com/fr", title: "France", startIndex: 0, endIndex: text.length, citedText: "" },
  ],
});

/** A scripted upstream of one kind; records every call it was sent. */
class ScriptedModel implements ProviderAdapter {
  readonly inputRules = {
    imageTokens: () => 1_000,
    pdfPageTokens: 1_000,
    tokenizer: "o200k",
    toolPromptTokens: 0,
  } as never;
  readonly calls: UpstreamCall[] = [];
  constructor(
    readonly kind: string,
    private readonly rounds: Round[],
    readonly nativeServerTools?: ProviderAdapter["nativeServerTools"],
  ) {}

  private answer(call: UpstreamCall): CanonicalResult | { fail: () => GatewayError } {
    this.calls.push({ ...call, request: structuredClone(call.request) });
    const round = this.rounds[this.calls.length - 1] ?? { content: [say("(no more script)")] };
    if ("fail" in round) return round;
    const calls = round.content.some((item) => item.type === "tool-call");
    return {
      content: round.content,
      finishReason: round.finish ?? (calls ? "tool-calls" : "stop"),
      usage: USAGE,
    };
  }

  async generate(call: UpstreamCall): Promise<CanonicalResult> {
    const answer = this.answer(call);
    if ("fail" in answer) throw answer.fail();
    return answer;
  }

  async *stream(call: UpstreamCall): AsyncIterable<CanonicalStreamPart> {
    const answer = this.answer(call);
    if ("fail" in answer) throw answer.fail();
    for (const part of convertResultToParts(answer)) yield part;
  }
}

function createConfig(options: { maxRounds?: number; backend?: boolean; secondRoute?: boolean }) {
  return buildConfig(
    {
      providers: [
        { id: "native", kind: "anthropic", base_url: "http://127.0.0.1:9/n" },
        { id: "plain", kind: "openai-compatible", base_url: "http://127.0.0.1:9/p" },
      ],
      models: [
        {
          slug: "test/native",
          name: "native",
          provider: { slug: "test", name: "Test" },
          description: "",
          context_length: 100_000,
          max_output_tokens: 1_000,
          pricing: { prompt: "1", completion: "2" },
          features: ["streaming", "tools"],
          datacenter_locations: ["local"],
          native_server_tools: { web_search: { price_per_call_usd: "0.01" } },
          routes: [
            { provider: "native", model: "native-upstream" },
            ...(options.secondRoute ? [{ provider: "plain", model: "plain-upstream" }] : []),
          ],
        },
        {
          slug: "test/plain",
          name: "plain",
          provider: { slug: "test", name: "Test" },
          description: "",
          context_length: 100_000,
          max_output_tokens: 1_000,
          pricing: { prompt: "1", completion: "2" },
          features: ["streaming", "tools"],
          datacenter_locations: ["local"],
          routes: [{ provider: "native", model: "native-upstream" }],
        },
      ],
      routing: { retries: 0 },
      server_tools: {
        max_rounds: options.maxRounds ?? 4,
        ...(options.backend
          ? {
              web_search: {
                backends: [
                  { id: "local", kind: "searxng", base_url: "http://127.0.0.1:9", price_per_call_usd: 0 },
                ],
              },
            }
          : {}),
      },
    },
    {},
  );
}

interface Harness {
  native: ScriptedModel;
  plain: ScriptedModel;
  finishes: GenerationOutcome[];
  admissions: number[];
  extensions: number[];
  announced: Promise<SettledGeneration>;
  run(request: Partial<CanonicalRequest>): Promise<GenerationRun>;
}

let nextId = 0;

function createHarness(
  rounds: Round[],
  options: {
    plainRounds?: Round[];
    headroom?: number;
    maxRounds?: number;
    backend?: boolean;
    secondRoute?: boolean;
  } = {},
): Harness {
  const config = createConfig(options);
  const native = new ScriptedModel("anthropic", rounds, { web_search: SUPPORT, web_fetch: SUPPORT });
  const plain = new ScriptedModel("openai-compatible", options.plainRounds ?? []);
  const finishes: GenerationOutcome[] = [];
  const admissions: number[] = [];
  const extensions: number[] = [];
  let headroom = options.headroom ?? Number.POSITIVE_INFINITY;
  const spendGuard = {
    mode: "in-process",
    async admit(input: { worstCase: { amountMicroUsd: number; outputCap: number } }) {
      let amount = input.worstCase.amountMicroUsd;
      admissions.push(amount);
      if (amount > headroom) throw new GatewayError("insufficient_credits", "no headroom");
      headroom -= amount;
      return {
        admittedAt: Date.now(),
        get amountMicroUsd() {
          return amount;
        },
        outputCap: input.worstCase.outputCap,
        outputCapLowered: false,
        async extend(more: number) {
          extensions.push(more);
          if (more > headroom) return false;
          headroom -= more;
          amount += more;
          return true;
        },
        async settle() {},
      };
    },
  } as unknown as SpendGuard;
  const engine = new GenerationEngine({
    config,
    store: {
      startedRecordsVisibleAtOnce: true,
      generations: {
        async start() {},
        async get() {
          return null;
        },
        async listInProgress() {
          return [];
        },
        async finish(_id, outcome) {
          finishes.push(structuredClone(outcome));
        },
      },
    },
    adapters: new Map<never, ProviderAdapter>([
      ["anthropic" as never, native],
      ["openai-compatible" as never, plain],
    ]),
    logger: { warn() {}, error() {}, info() {} } as unknown as Logger,
    spendGuard,
    serverTools: createServerTools(config.serverTools!, { env: {} }),
  });
  const caller = {
    key: { id: "key", source: "api", allowedModels: null },
    workspace: { id: "ws", invoicing: true, locked: false, balanceMicroUsd: 1_000_000 },
    limits: {},
  } as unknown as AdmittedCaller;
  const harness: Harness = {
    native,
    plain,
    finishes,
    admissions,
    extensions,
    announced: Promise.resolve(undefined as never),
    async run(request) {
      const admitted = await engine.admit({
        requestId: `req-${++nextId}`,
        format: "anthropic_messages",
        caller,
        request: createTestRequest({ model: "test/native", ...request }),
        startedAt: performance.now(),
      });
      harness.announced = admitted.settled;
      return engine.run(admitted, new AbortController().signal, 1_000);
    },
  };
  return harness;
}

const webSearch = (parameters?: Record<string, unknown>, maxUses = 1000): ServerToolActivation => ({
  id: "web_search",
  maxUses,
  events: false,
  param: "plugins[0]",
  ...(parameters === undefined ? {} : { parameters }),
});

/** What the client sees, streamed or folded; `state` counts provider records that leaked. */
async function collect(
  run: GenerationRun,
  stream: boolean,
): Promise<{ content: ResultContent[]; leaked: number }> {
  if (!stream) {
    await run.settle();
    const content = run.result!.content;
    return {
      content,
      leaked: content.filter((item) => "providerState" in item && item.type !== "reasoning").length,
    };
  }
  const content: ResultContent[] = [];
  const texts = new Map<string, Extract<ResultContent, { type: "text" }>>();
  let leaked = 0;
  for await (const part of run.parts()) {
    if ((part.type === "server-tool-call" || part.type === "server-tool-result") && part.providerState)
      leaked++;
    if (part.type === "text-start") {
      const entry: Extract<ResultContent, { type: "text" }> = { type: "text", text: "" };
      texts.set(part.id, entry);
      content.push(entry);
    } else if (part.type === "text-delta") texts.get(part.id)!.text += part.delta;
    else if (part.type === "citation") {
      const entry = texts.get(part.id)!;
      entry.citations = [...(entry.citations ?? []), part.citation];
    } else if (part.type === "tool-call") {
      content.push({ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments });
    } else if (part.type === "server-tool-call") content.push({ type: "server-tool-call", call: part.call });
    else if (part.type === "server-tool-result")
      content.push({ type: "server-tool-result", result: part.result });
    else if (part.type === "error") content.push({ type: "text", text: `ERROR ${part.error.code}` });
  }
  await run.settle();
  return { content, leaked };
}

const kinds = (content: ResultContent[]) =>
  content.map((item) =>
    item.type === "server-tool-result"
      ? `result:${item.result.status}`
      : item.type === "server-tool-call"
        ? `call:${item.call.id}`
        : item.type === "text"
          ? `text:${item.text}`
          : item.type,
  );

test("admission: the model's native web_search needs no gateway backend; engine native on a model without it is refused naming the field", async () => {
  const harness = createHarness([{ content: [say("ok")] }]);
  const run = await harness.run({ serverTools: [webSearch()] });
  await run.settle();
  assert.deepEqual(harness.native.calls[0].request.nativeServerTools, [{ tool: "web_search", maxUses: 5 }]);
  assert.deepEqual(harness.native.calls[0].request.tools, [], "no gateway definition for a native tool");

  await assert.rejects(
    harness.run({ model: "test/plain", serverTools: [webSearch({ engine: "native" })] }),
    (error: GatewayError) => error.code === "invalid_request" && error.param === "plugins[0].engine",
  );
  await assert.rejects(
    harness.run({ serverTools: [webSearch({ engine: "exa" })] }),
    (error: GatewayError) =>
      error.code === "invalid_request" &&
      error.param === "plugins[0].engine" &&
      /"native".*"gateway"/.test(error.message),
  );
  // The gateway's own engine needs its backend, which this gateway lacks.
  await assert.rejects(
    harness.run({ serverTools: [webSearch({ engine: "gateway" })] }),
    (error: GatewayError) => error.code === "invalid_request" && /not configured/.test(error.message),
  );
  // A model without native search and no backend: refused as before.
  await assert.rejects(
    harness.run({ model: "test/plain", serverTools: [webSearch()] }),
    (error: GatewayError) => error.code === "invalid_request" && error.param === "plugins[0]",
  );
  // A caller's function may not take the native tool's name.
  await assert.rejects(
    harness.run({ serverTools: [webSearch()], tools: [{ name: "web_search", param: "tools[3]" }] }),
    (error: GatewayError) =>
      error.code === "invalid_request" &&
      /rename the function/.test(error.message) &&
      error.param === "tools[3]",
  );
});

test("admission: the activation's options go upstream; max_uses and max_tool_calls lower the calls per round; the reservation holds them", async () => {
  const harness = createHarness([{ content: [say("ok")] }, { content: [say("ok")] }]);
  await (
    await harness.run({
      serverTools: [
        webSearch(
          {
            allowed_domains: ["example.com"],
            user_location: { type: "approximate", country: "fr", city: "Lyon" },
            search_context_size: "high",
          },
          3,
        ),
      ],
    })
  ).settle();
  assert.deepEqual(harness.native.calls[0].request.nativeServerTools, [
    {
      tool: "web_search",
      maxUses: 3,
      allowedDomains: ["example.com"],
      userLocation: { country: "FR", city: "Lyon" },
      searchContextSize: "high",
    },
  ]);
  await (await harness.run({ serverTools: [webSearch()], maxToolCalls: 2 })).settle();
  assert.equal(harness.native.calls[1].request.nativeServerTools?.[0].maxUses, 2);

  // Three calls at $0.01 and three passes over the prompt with results: far above a plain round.
  const plain = createHarness([{ content: [say("ok")] }]);
  await (await plain.run({ model: "test/plain" })).settle();
  assert.ok(harness.admissions[0] >= plain.admissions[0] + 3 * SEARCH_PRICE, `${harness.admissions[0]}`);
  assert.ok(harness.admissions[1] < harness.admissions[0], "two calls hold less than three");
});

test("admission: a malformed option of a native tool is refused as for the gateway's own", async () => {
  const harness = createHarness([]);
  await assert.rejects(
    harness.run({ serverTools: [webSearch({ user_location: { country: "France" } })] }),
    (error: GatewayError) => error.param === "plugins[0].user_location.country",
  );
  assert.equal(harness.native.calls.length, 0);
});

test("a domain list the provider cannot apply sends the tool to the gateway on that route (or refuses an explicit native engine)", async () => {
  const harness = createHarness([{ content: [say("ok")] }], { backend: true });
  await (
    await harness.run({
      serverTools: [webSearch({ allowed_domains: ["a.example"], blocked_domains: ["b.example"] })],
    })
  ).settle();
  const sent = harness.native.calls[0].request;
  assert.equal(sent.nativeServerTools, undefined);
  assert.deepEqual(
    sent.tools.map((tool) => tool.name),
    ["web_search"],
  );
  await assert.rejects(
    harness.run({
      serverTools: [
        webSearch({ engine: "native", allowed_domains: ["a.example"], blocked_domains: ["b.example"] }),
      ],
    }),
    (error: GatewayError) => error.param === "plugins[0].engine",
  );
});

for (const stream of [false, true]) {
  const mode = stream ? "streamed" : "non-streamed";

  test(`${mode}: the provider's search is shown, priced from the catalog, counted and recorded; its records stay in the run`, async () => {
    const harness = createHarness([
      { content: [...nativeSearch("s1", "capital of france"), nativeResult("s2", true), cited("Paris.")] },
    ]);
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const { content, leaked } = await collect(run, stream);
    assert.deepEqual(kinds(content), ["call:s1", "result:completed", "result:failed", "text:Paris."]);
    assert.equal(leaked, 0, "the provider's records never reach the client");
    const result = content[1] as Extract<ResultContent, { type: "server-tool-result" }>;
    assert.equal(result.result.costMicroUsd, SEARCH_PRICE);
    assert.deepEqual(result.result.input, { query: "capital of france" });
    assert.equal((result.result.output as { query: string }).query, "capital of france");
    assert.equal(
      (content[2] as Extract<ResultContent, { type: "server-tool-result" }>).result.costMicroUsd,
      0,
    );
    assert.deepEqual(
      (content[3] as Extract<ResultContent, { type: "text" }>).citations?.[0].url,
      "https://example.com/fr",
    );

    const settlement = await run.settle();
    assert.equal(settlement.costMicroUsd, ROUND_COST + SEARCH_PRICE);
    assert.deepEqual(settlement.serverToolCalls, { web_search: 2 });
    assert.deepEqual(harness.finishes[0].toolCostsMicroUsd, { web_search: SEARCH_PRICE });
    const settled = await harness.announced;
    assert.deepEqual(
      settled.toolCalls.map((call) => [call.tool, call.status, call.costMicroUsd, call.native]),
      [
        ["web_search", "completed", SEARCH_PRICE, true],
        ["web_search", "failed", 0, true],
      ],
    );
  });

  test(`${mode}: a paused turn is resumed with the paused turn last; the client sees one answer`, async () => {
    const harness = createHarness([
      {
        content: [...nativeSearch("a1", "one"), say("Still looking."), ...nativeSearch("a2", "two", false)],
        finish: "pause",
      },
      { content: [nativeResult("a2"), cited("Found it.")] },
    ]);
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const { content } = await collect(run, stream);
    assert.deepEqual(kinds(content), [
      "call:a1",
      "result:completed",
      "text:Still looking.",
      "call:a2",
      "result:completed",
      "text:Found it.",
    ]);
    // The answered call's result carries the call's input though the round that answered it did not.
    const late = content[4] as Extract<ResultContent, { type: "server-tool-result" }>;
    assert.deepEqual(late.result.input, { query: "two" });

    assert.equal(harness.native.calls.length, 2);
    const resumed = harness.native.calls[1].request;
    const last = resumed.messages.at(-1)!;
    assert.equal(last.role, "assistant", "no user or tool turn after the paused one");
    assert.deepEqual(
      last.content.map((part) =>
        part.type === "native-tool" ? JSON.parse(part.providerState.nativeBlock!).type : part.type,
      ),
      ["server_tool_use", "web_search_tool_result", "text", "server_tool_use"],
    );
    assert.equal(resumed.messages.length, 2);
    // Two calls made (one still open, answered in this round): the round may still make five.
    assert.deepEqual(resumed.nativeServerTools, [{ tool: "web_search", maxUses: 5 }]);
    assert.equal(resumed.toolChoice, undefined);

    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "stop");
    assert.equal(settlement.usage.inputTokens, 2_000, "usage summed over both rounds");
    assert.equal(settlement.costMicroUsd, 2 * ROUND_COST + 2 * SEARCH_PRICE);
    assert.deepEqual(settlement.serverToolCalls, { web_search: 2 });
  });

  test(`${mode}: a paused turn at the round cap ends the answer with length`, async () => {
    const paused = { content: [...nativeSearch("p1", "one"), say("More.")], finish: "pause" as const };
    const harness = createHarness([paused, paused, paused], { maxRounds: 2 });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    await collect(run, stream);
    assert.equal(harness.native.calls.length, 2);
    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "length");
    assert.equal(harness.finishes[0].finishReason, "length");
  });

  test(`${mode}: a paused turn the headroom cannot resume ends with length, after its round is billed`, async () => {
    const paused = { content: [...nativeSearch("b1", "one"), say("More.")], finish: "pause" as const };
    const first = createHarness([{ content: [say("x")] }]);
    await (await first.run({ serverTools: [webSearch()] })).settle();
    // Enough for admission, not for the next round's calls and passes.
    const harness = createHarness([paused, { content: [say("never")] }], {
      headroom: first.admissions[0] + 1_000,
    });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const { content } = await collect(run, stream);
    assert.deepEqual(kinds(content), ["call:b1", "result:completed", "text:More."]);
    assert.equal(harness.native.calls.length, 1);
    assert.equal(harness.extensions.length, 1);
    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "length");
    assert.equal(settlement.costMicroUsd, ROUND_COST + SEARCH_PRICE);
  });

  test(`${mode}: max_uses spent in a paused round: the next round is not offered the tool`, async () => {
    const harness = createHarness([
      { content: [...nativeSearch("m1", "one"), ...nativeSearch("m2", "two")], finish: "pause" },
      { content: [say("Answer.")] },
    ]);
    const run = await harness.run({ stream, serverTools: [webSearch(undefined, 2)] });
    await collect(run, stream);
    assert.equal(harness.native.calls[0].request.nativeServerTools?.[0].maxUses, 2);
    assert.deepEqual(harness.native.calls[1].request.nativeServerTools, []);
  });

  test(`${mode}: the provider's search beside a call of a gateway tool: the next round re-sends the provider's records`, async () => {
    const harness = createHarness([
      {
        content: [
          ...nativeSearch("x1", "one"),
          { type: "tool-call", id: "toolu_dt", name: "datetime", arguments: "{}" },
        ],
      },
      { content: [say("It is late.")] },
    ]);
    const run = await harness.run({
      stream,
      serverTools: [webSearch(), { id: "datetime", maxUses: 1000, events: false, param: "plugins[1]" }],
    });
    const { content } = await collect(run, stream);
    assert.deepEqual(kinds(content).slice(0, 2), ["call:x1", "result:completed"]);
    assert.deepEqual(
      harness.native.calls[0].request.tools.map((tool) => tool.name),
      ["datetime"],
    );
    const second = harness.native.calls[1].request;
    assert.deepEqual(
      second.messages.at(-2)!.content.map((part) => part.type),
      ["native-tool", "native-tool", "tool-call"],
    );
    assert.equal(second.messages.at(-1)!.role, "tool");
    assert.deepEqual(second.nativeServerTools, [{ tool: "web_search", maxUses: 5 }]);
    const settlement = await run.settle();
    assert.deepEqual(settlement.serverToolCalls, { web_search: 1, datetime: 1 });
  });

  test(`${mode}: failover to a route whose provider cannot run the tool uses the gateway's own tool there`, async () => {
    const harness = createHarness([{ fail: () => new GatewayError("provider_unavailable", "down") }], {
      backend: true,
      secondRoute: true,
      plainRounds: [{ content: [say("From the plain route.")] }],
    });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const { content } = await collect(run, stream);
    assert.deepEqual(kinds(content), ["text:From the plain route."]);
    assert.deepEqual(harness.native.calls[0].request.nativeServerTools, [{ tool: "web_search", maxUses: 5 }]);
    assert.deepEqual(harness.native.calls[0].request.tools, []);
    const plainRequest = harness.plain.calls[0].request;
    assert.equal(plainRequest.nativeServerTools, undefined);
    assert.deepEqual(
      plainRequest.tools.map((tool) => tool.name),
      ["web_search"],
    );
  });
}

test("without the gateway's backend, a route that cannot run the tool natively is not tried", async () => {
  const harness = createHarness([{ fail: () => new GatewayError("provider_unavailable", "down") }], {
    secondRoute: true,
    plainRounds: [{ content: [say("never")] }],
  });
  await assert.rejects(
    harness.run({ serverTools: [webSearch()] }),
    (error: GatewayError) => error.code === "provider_unavailable",
  );
  assert.equal(harness.plain.calls.length, 0);
});
