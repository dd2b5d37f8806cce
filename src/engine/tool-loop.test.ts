/**
 * The server-tool loop inside a run, with a scripted model (one canned answer per round) and
 * scripted tools, streamed and not: what the client sees, what the model is sent next round, the
 * bounds (max_uses, max_tool_calls, rounds, budget), concurrency, and that every way out settles
 * once with the rounds and the tools billed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type {
  CanonicalRequest,
  CanonicalResult,
  CanonicalStreamPart,
  ResultContent,
  ServerToolActivation,
  ServerToolId,
} from "../canonical/index.js";
import { buildConfig } from "../config/load-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import { convertResultToParts } from "../providers/shared/convert-result-to-parts.js";
import type { SettledGeneration } from "./admitted-generation.js";
import { GenerationEngine } from "./generation-engine.js";
import type { GenerationOutcome } from "./generation-record.js";
import type { GenerationRun } from "./generation-run.js";
import type { AdmittedCaller, ServerToolExecution, ServerTools } from "./ports.js";

/** 10 prompt + 5 output tokens a round: 10 × 1 + 5 × 2 = 20 µUSD at $1/$2 per 1M... ×1000 below. */
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

type Round = ResultContent[] | { fail: () => GatewayError } | { hang: true };

const search = (id: string, query: string): ResultContent => ({
  type: "tool-call",
  id,
  name: "web_search",
  arguments: JSON.stringify({ query }),
});
const say = (text: string): ResultContent => ({ type: "text", text });

/** A model answering one scripted round per upstream call; records every request it was sent. */
class ScriptedModel implements ProviderAdapter {
  readonly kind = "openai-compatible";
  readonly inputRules = {
    imageTokens: () => 1_000,
    pdfPageTokens: 1_000,
    tokenizer: "o200k",
    toolPromptTokens: 0,
  } as never;
  readonly requests: CanonicalRequest[] = [];
  constructor(private readonly rounds: Round[]) {}

  private answer(call: UpstreamCall): CanonicalResult | Round {
    this.requests.push(structuredClone(call.request));
    const round = this.rounds[this.requests.length - 1] ?? [say("(no more script)")];
    if (!Array.isArray(round)) return round;
    const calls = round.some((item) => item.type === "tool-call");
    return { content: round, finishReason: calls ? "tool-calls" : "stop", usage: USAGE };
  }

  async generate(call: UpstreamCall): Promise<CanonicalResult> {
    const answer = this.answer(call);
    if ("fail" in answer) throw answer.fail();
    if ("hang" in answer) return waitForAbort(call.signal);
    return answer as CanonicalResult;
  }

  async *stream(call: UpstreamCall): AsyncIterable<CanonicalStreamPart> {
    const answer = this.answer(call);
    if ("fail" in answer) throw answer.fail();
    if ("hang" in answer) await waitForAbort(call.signal);
    for (const part of convertResultToParts(answer as CanonicalResult)) yield part;
  }
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

interface ToolScript {
  /** Price of one successful call, micro-USD. */
  price?: number;
  delayMs?: number;
  fail?: boolean;
}

/** Scripted tools: web_search answers two sources; every execution is recorded. */
class ScriptedTools implements ServerTools {
  readonly executed: Array<{ tool: ServerToolId; arguments: string; at: number }> = [];
  constructor(private readonly script: Partial<Record<ServerToolId, ToolScript>> = {}) {}

  runs() {
    return true;
  }

  /** No model of this file's catalog runs a tool itself. */
  describeNative() {
    return undefined;
  }

  prepare(request: CanonicalRequest) {
    for (const activation of request.serverTools) {
      if (activation.id === "image")
        throw GatewayError.invalidRequest("image is not configured", activation.param);
    }
    const tools = request.serverTools.map((activation) => activation.id);
    return {
      definitions: tools.map((name) => ({ name, parameters: { type: "object" } })),
      toolNamed: (name: string) => tools.find((tool) => tool === name),
      maxCallCostMicroUsd: (tool: ServerToolId) => this.script[tool]?.price ?? 0,
      maxResultTokens: () => 100,
      readInput: (_tool: ServerToolId, json: string) => JSON.parse(json) as Record<string, unknown>,
      execute: async (
        tool: ServerToolId,
        json: string,
        signal: AbortSignal,
      ): Promise<ServerToolExecution> => {
        this.executed.push({ tool, arguments: json, at: performance.now() });
        const script = this.script[tool] ?? {};
        if (script.delayMs) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, script.delayMs);
            signal.addEventListener("abort", () => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
        if (signal.aborted) {
          return {
            error: { code: "unavailable", message: "cancelled" },
            costMicroUsd: 0,
            forModel: "cancelled",
          };
        }
        if (script.fail) {
          return {
            error: { code: "unavailable", message: "backend down" },
            costMicroUsd: 0,
            forModel: "failed",
          };
        }
        const { query } = JSON.parse(json) as { query: string };
        return {
          output: {
            kind: "search",
            query,
            sources: [
              {
                url: "https://example.com/fr",
                title: "France",
                snippet: "Paris is the capital.",
                pageAge: null,
              },
              { url: "https://example.org/", title: "Org", snippet: "", pageAge: null },
            ],
          },
          costMicroUsd: script.price ?? 0,
          forModel: `results for ${query}`,
        };
      },
    };
  }
}

const CONFIG = buildConfig(
  {
    providers: [
      {
        id: "a",
        kind: "openai-compatible",
        base_url: "http://127.0.0.1:9/a",
        timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, response_ms: 1_000, idle_ms: 1_000 },
      },
    ],
    models: [
      {
        slug: "test/main",
        name: "main",
        provider: { slug: "test", name: "Test" },
        description: "",
        release_date: "2026-01-01",
        context_length: 100_000,
        max_output_tokens: 1_000,
        pricing: { prompt: "1", completion: "2" },
        features: ["streaming", "tools"],
        datacenter_locations: ["local"],
        routes: [{ provider: "a", model: "a-upstream" }],
      },
    ],
    server_tools: { max_rounds: 3 },
  },
  {},
);

interface Harness {
  model: ScriptedModel;
  tools: ScriptedTools;
  finishes: GenerationOutcome[];
  settlements: number[];
  extensions: number[];
  announced: Promise<SettledGeneration>;
  run(request: Partial<CanonicalRequest>, signal?: AbortSignal): Promise<GenerationRun>;
}

let nextId = 0;

function createHarness(
  rounds: Round[],
  options: { tools?: Partial<Record<ServerToolId, ToolScript>>; headroom?: number; noTools?: boolean } = {},
): Harness {
  const model = new ScriptedModel(rounds);
  const tools = new ScriptedTools(options.tools);
  const finishes: GenerationOutcome[] = [];
  const settlements: number[] = [];
  const extensions: number[] = [];
  let headroom = options.headroom ?? Number.POSITIVE_INFINITY;
  const spendGuard = {
    mode: "in-process",
    async admit(input: { worstCase: { amountMicroUsd: number; outputCap: number } }) {
      let amount = input.worstCase.amountMicroUsd;
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
        async settle(cost: number) {
          settlements.push(cost);
        },
      };
    },
  } as unknown as SpendGuard;
  const engine = new GenerationEngine({
    config: CONFIG,
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
    adapters: new Map([["openai-compatible", model]]),
    logger: { warn() {}, error() {}, info() {} } as unknown as Logger,
    spendGuard,
    ...(options.noTools ? {} : { serverTools: tools }),
  });
  const caller = {
    key: { id: "key", source: "api", allowedModels: null },
    workspace: { id: "ws", invoicing: true, locked: false, balanceMicroUsd: 1_000_000 },
    limits: {},
  } as unknown as AdmittedCaller;
  const harness: Harness = {
    model,
    tools,
    finishes,
    settlements,
    extensions,
    announced: Promise.resolve(undefined as never),
    async run(request, signal = new AbortController().signal) {
      const admitted = await engine.admit({
        requestId: `req-${++nextId}`,
        format: "chat_completions",
        caller,
        request: createTestRequest({ model: "test/main", ...request }),
        startedAt: performance.now(),
      });
      harness.announced = admitted.settled;
      return engine.run(admitted, signal, 1_000);
    },
  };
  return harness;
}

const webSearch = (overrides: Partial<ServerToolActivation> = {}): ServerToolActivation => ({
  id: "web_search",
  maxUses: 1000,
  events: false,
  param: "plugins[0]",
  ...overrides,
});

/** What the client sees: the run's parts (streamed) or its folded result as the same vocabulary. */
async function collect(run: GenerationRun, stream: boolean): Promise<ResultContent[]> {
  if (!stream) {
    await run.settle();
    return run.result!.content;
  }
  const content: ResultContent[] = [];
  const texts = new Map<string, Extract<ResultContent, { type: "text" }>>();
  for await (const part of run.parts()) {
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
  return content;
}

const kinds = (content: ResultContent[]) =>
  content.map((item) =>
    item.type === "server-tool-result"
      ? `result:${item.result.status}`
      : item.type === "text"
        ? `text:${item.text}`
        : item.type,
  );

for (const stream of [false, true]) {
  const mode = stream ? "streamed" : "non-streamed";

  test(`${mode}: a search round, then the cited answer; the model gets the result; rounds and tool billed`, async () => {
    const harness = createHarness(
      [
        [say("Let me look. "), search("call_1", "capital of france")],
        [say("Paris ([example.com](https://example.com/fr)) is the capital.")],
      ],
      { tools: { web_search: { price: 5_000 } } },
    );
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), [
      "text:Let me look. ",
      "server-tool-call",
      "result:completed",
      "text:Paris ([example.com](https://example.com/fr)) is the capital.",
    ]);
    const call = content[1] as Extract<ResultContent, { type: "server-tool-call" }>;
    assert.equal(call.call.tool, "web_search");
    assert.deepEqual(call.call.input, { query: "capital of france" });
    assert.match(call.call.id, /^[A-Za-z0-9_]+$/);
    const answer = content[3] as Extract<ResultContent, { type: "text" }>;
    assert.deepEqual(answer.citations, [
      {
        url: "https://example.com/fr",
        title: "France",
        startIndex: 6,
        endIndex: 45,
        citedText: "Paris is the capital.",
      },
    ]);
    assert.equal(answer.text.slice(6, 45), "([example.com](https://example.com/fr))");

    // Round 2 was sent the model's turn (text + call) and the tool's result for that call.
    assert.equal(harness.model.requests.length, 2);
    const second = harness.model.requests[1];
    assert.deepEqual(
      second.tools.map((tool) => tool.name),
      ["web_search"],
    );
    assert.deepEqual(second.messages.slice(-2), [
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look. " },
          { type: "tool-call", id: "call_1", name: "web_search", arguments: '{"query":"capital of france"}' },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            content: [{ type: "text", text: "results for capital of france" }],
          },
        ],
      },
    ]);

    const settlement = await run.settle();
    assert.equal(settlement.costMicroUsd, 2 * ROUND_COST + 5_000);
    assert.equal(settlement.usage.inputTokens, 2_000);
    assert.equal(settlement.finishReason, "stop");
    assert.deepEqual(settlement.serverToolCalls, { web_search: 1 });
    assert.equal(harness.finishes.length, 1);
    assert.deepEqual(harness.settlements, [2 * ROUND_COST + 5_000]);
    const [outcome] = harness.finishes;
    assert.equal(outcome.status, "ok");
    assert.deepEqual(outcome.toolCostsMicroUsd, { web_search: 5_000 });
    assert.equal(outcome.tokensPrompt, 2_000);
    const settled = await harness.announced;
    assert.deepEqual(
      settled.toolCalls.map((call) => [call.tool, call.status, call.costMicroUsd]),
      [["web_search", "completed", 5_000]],
    );
  });

  test(`${mode}: two calls in one round run concurrently; results come in call order`, async () => {
    const harness = createHarness([[search("c1", "one"), search("c2", "two")], [say("done")]], {
      tools: { web_search: { delayMs: 150 } },
    });
    const started = performance.now();
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.ok(performance.now() - started < 290, "two 150 ms calls overlapped");
    assert.deepEqual(kinds(content), [
      "server-tool-call",
      "server-tool-call",
      "result:completed",
      "result:completed",
      "text:done",
    ]);
    const results = content.filter((item) => item.type === "server-tool-result");
    assert.deepEqual(
      results.map((item) => item.result.input),
      [{ query: "one" }, { query: "two" }],
    );
  });

  test(`${mode}: a call past max_uses is answered "limit reached", costs nothing, and the loop goes on`, async () => {
    const harness = createHarness([[search("c1", "one")], [search("c2", "two")], [say("answer")]], {
      tools: { web_search: { price: 1_000 } },
    });
    const run = await harness.run({ stream, serverTools: [webSearch({ maxUses: 1 })] });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), [
      "server-tool-call",
      "result:completed",
      "server-tool-call",
      "result:failed",
      "text:answer",
    ]);
    const refused = content[3] as Extract<ResultContent, { type: "server-tool-result" }>;
    assert.equal(refused.result.error?.code, "max_uses_exceeded");
    assert.equal(refused.result.costMicroUsd, 0);
    assert.equal(harness.tools.executed.length, 1);
    const third = harness.model.requests[2];
    const lastResult = third.messages.at(-1)!;
    assert.equal(lastResult.role, "tool");
    assert.match(JSON.stringify(lastResult.content), /at most 1 times/);
    assert.equal((await run.settle()).costMicroUsd, 3 * ROUND_COST + 1_000);
  });

  test(`${mode}: max_tool_calls bounds the calls of every tool together`, async () => {
    const harness = createHarness([[search("c1", "one"), search("c2", "two")], [say("answer")]]);
    const run = await harness.run({ stream, serverTools: [webSearch()], maxToolCalls: 1 });
    const content = await collect(run, stream);
    const results = content.filter((item) => item.type === "server-tool-result");
    assert.deepEqual(
      results.map((item) => item.result.error?.code ?? "ok"),
      ["ok", "max_uses_exceeded"],
    );
    assert.equal(harness.tools.executed.length, 1);
  });

  test(`${mode}: a carried tool_choice that forces a call goes in the first round only; one that only narrows stays`, async () => {
    const choice = (value: Record<string, unknown>) => ({
      family: "responses" as const,
      param: "tool_choice",
      kind: String(value.type),
      path: ["tool_choice"],
      value,
    });
    const forcing = choice({ type: "allowed_tools", mode: "required", tools: [] });
    const narrowing = choice({ type: "allowed_tools", mode: "auto", tools: [] });
    for (const [carried, later] of [
      [forcing, undefined],
      [narrowing, [narrowing]],
    ] as const) {
      const harness = createHarness([[search("c1", "one")], [say("answer")]]);
      const run = await harness.run({ stream, serverTools: [webSearch()], extraFields: [carried] });
      await collect(run, stream);
      assert.deepEqual(harness.model.requests[0].extraFields, [carried]);
      assert.deepEqual(harness.model.requests[1].extraFields, later);
    }
  });

  test(`${mode}: the last round offers no server tool; a model that calls one anyway ends with length`, async () => {
    const harness = createHarness([[search("c1", "one")], [search("c2", "two")], [search("c3", "three")]]);
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.equal(harness.model.requests.length, 3, "max_rounds is 3");
    assert.equal(harness.model.requests[1].toolChoice, undefined);
    assert.deepEqual(harness.model.requests[2].toolChoice, { type: "none" });
    assert.deepEqual(kinds(content).slice(-2), ["server-tool-call", "result:failed"]);
    assert.equal(harness.tools.executed.length, 2);
    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "length");
    assert.equal(settlement.costMicroUsd, 3 * ROUND_COST);
  });

  test(`${mode}: when the headroom cannot pay for the next round, the calls are not run and the answer ends`, async () => {
    // Enough for the round spent and the search's price, not for the next round's worst case
    // (about 2,500: its prompt, 100 tokens of result, the output cap).
    const harness = createHarness([[say("Searching."), search("c1", "one")], [say("never")]], {
      tools: { web_search: { price: 50_000 } },
      headroom: 53_000,
    });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), ["text:Searching.", "server-tool-call", "result:failed"]);
    const refused = content[2] as Extract<ResultContent, { type: "server-tool-result" }>;
    assert.equal(refused.result.error?.code, "budget_exhausted");
    assert.equal(harness.tools.executed.length, 0);
    assert.equal(harness.model.requests.length, 1);
    assert.equal(harness.extensions.length, 1);
    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "length");
    assert.equal(settlement.costMicroUsd, ROUND_COST);
  });

  test(`${mode}: a headroom that pays for the search and the next round's worst case lets the round run`, async () => {
    // The next round's tool results are reserved per token at the prompt rate: 100 tokens, 100 µUSD.
    const harness = createHarness([[say("Searching."), search("c1", "one")], [say("found")]], {
      tools: { web_search: { price: 50_000 } },
      headroom: 60_000,
    });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), [
      "text:Searching.",
      "server-tool-call",
      "result:completed",
      "text:found",
    ]);
    assert.equal(harness.model.requests.length, 2);
    const settlement = await run.settle();
    assert.equal(settlement.finishReason, "stop");
    assert.equal(settlement.costMicroUsd, 2 * ROUND_COST + 50_000);
  });

  test(`${mode}: a turn mixing a server call and a client call runs the server call, then returns the client call`, async () => {
    const harness = createHarness([
      [search("c1", "one"), { type: "tool-call", id: "fn_1", name: "lookup", arguments: "{}" }],
    ]);
    const run = await harness.run({
      stream,
      serverTools: [webSearch()],
      tools: [{ name: "lookup", parameters: { type: "object" } }],
    });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), ["server-tool-call", "result:completed", "tool-call"]);
    assert.equal(harness.model.requests.length, 1);
    assert.equal((await run.settle()).finishReason, "tool-calls");
  });

  test(`${mode}: a failing tool is a result the model reads; the answer goes on and the call costs nothing`, async () => {
    const harness = createHarness([[search("c1", "one")], [say("no luck")]], {
      tools: { web_search: { fail: true, price: 9_000 } },
    });
    const run = await harness.run({ stream, serverTools: [webSearch()] });
    const content = await collect(run, stream);
    assert.deepEqual(kinds(content), ["server-tool-call", "result:failed", "text:no luck"]);
    assert.equal((await run.settle()).costMicroUsd, 2 * ROUND_COST);
    assert.deepEqual(harness.finishes[0].toolCostsMicroUsd, {});
  });

  test(`${mode}: the second round failing ends the run with its error; the first round and the tool are billed`, async () => {
    const harness = createHarness(
      [[search("c1", "one")], { fail: () => new GatewayError("provider_unavailable", "HTTP 503") }],
      { tools: { web_search: { price: 1_000 } } },
    );
    if (!stream) {
      await assert.rejects(harness.run({ stream, serverTools: [webSearch()] }), {
        code: "provider_unavailable",
      });
    } else {
      const run = await harness.run({ stream, serverTools: [webSearch()] });
      const content = await collect(run, stream);
      assert.deepEqual(kinds(content).at(-1), "text:ERROR provider_unavailable");
    }
    assert.equal(harness.finishes.length, 1);
    const [outcome] = harness.finishes;
    assert.equal(outcome.status, "error");
    assert.equal(outcome.errorCode, "provider_unavailable");
    assert.equal(outcome.costMicroUsd, ROUND_COST + 1_000);
    assert.deepEqual(harness.settlements, [ROUND_COST + 1_000]);
  });

  test(`${mode}: the client leaving while a tool runs settles once, cancelled, with what was spent`, async () => {
    const harness = createHarness([[search("c1", "one")], [say("never")]], {
      tools: { web_search: { delayMs: 5_000, price: 1_000 } },
    });
    const client = new AbortController();
    const started = performance.now();
    if (!stream) {
      setTimeout(() => client.abort(), 100);
      await assert.rejects(harness.run({ stream, serverTools: [webSearch()] }, client.signal));
    } else {
      const run = await harness.run({ stream, serverTools: [webSearch()] }, client.signal);
      setTimeout(() => client.abort(), 100);
      await collect(run, stream);
    }
    assert.ok(performance.now() - started < 2_000, "the tool was aborted, not waited for");
    await harness.announced;
    assert.equal(harness.finishes.length, 1);
    assert.equal(harness.finishes[0].status, "cancelled");
    assert.equal(harness.finishes[0].costMicroUsd, ROUND_COST);
    assert.equal(harness.settlements.length, 1);
    assert.equal(harness.model.requests.length, 1);
  });
}

test("activations are checked before anything is reserved: not configured, refused by the tools, name clash", async () => {
  const bare = createHarness([[say("x")]], { noTools: true });
  await assert.rejects(bare.run({ serverTools: [webSearch()] }), {
    code: "invalid_request",
    param: "plugins[0]",
    message: /not configured/,
  });
  const harness = createHarness([[say("x")]]);
  await assert.rejects(
    harness.run({ serverTools: [{ id: "image", maxUses: 1, events: false, param: "tools[1]" }] }),
    {
      code: "invalid_request",
      param: "tools[1]",
    },
  );
  await assert.rejects(
    harness.run({ serverTools: [webSearch()], tools: [{ name: "x" }, { name: "web_search" }] }),
    { code: "invalid_request", message: /tools\[1\] is named "web_search"/ },
  );
  assert.equal(harness.model.requests.length, 0);
  assert.equal(harness.finishes.length, 0);
});

test("hi.tool_event wishes ride on the parts: the tool's events or the request's", async () => {
  const harness = createHarness([[search("c1", "one")], [say("ok")]]);
  let run = await harness.run({ stream: true, serverTools: [webSearch({ events: true })] });
  let content = await collect(run, true);
  assert.equal((content[0] as Extract<ResultContent, { type: "server-tool-call" }>).call.events, true);
  const harness2 = createHarness([[search("c1", "one")], [say("ok")]]);
  run = await harness2.run({ stream: true, serverTools: [webSearch()], toolEvents: true });
  content = await collect(run, true);
  assert.equal((content[1] as Extract<ResultContent, { type: "server-tool-result" }>).result.events, true);
  const harness3 = createHarness([[search("c1", "one")], [say("ok")]]);
  run = await harness3.run({ stream: true, serverTools: [webSearch()] });
  content = await collect(run, true);
  assert.equal((content[0] as Extract<ResultContent, { type: "server-tool-call" }>).call.events, false);
});
