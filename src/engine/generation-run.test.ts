/**
 * The run with a scripted adapter: which routes are tried in which order, what is retried, what
 * the breaker skips, and that every way out settles exactly once, billing only the serving attempt.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import type {
  CanonicalRequest,
  CanonicalResult,
  CanonicalStreamPart,
  CanonicalUsage,
} from "../canonical/index.js";
import { buildConfig } from "../config/load-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import { CircuitBreakers } from "./circuit-breaker.js";
import { GenerationEngine } from "./generation-engine.js";
import type { GenerationOutcome } from "./generation-record.js";
import type { GenerationRun } from "./generation-run.js";
import type { AdmittedCaller } from "./ports.js";
import type { RetryPolicy } from "./retry-policy.js";

type Step =
  | { kind: "ok"; text?: string; usage?: Partial<CanonicalUsage> }
  | { kind: "fail"; error: () => GatewayError }
  /** Streams the text, then fails in-band (after the first part). */
  | { kind: "fail-after-first"; text: string }
  /** Never answers until its call is aborted. */
  | { kind: "hang" }
  /** Fails after a while, without any part (a first-byte deadline after the response started). */
  | { kind: "slow-fail"; afterMs: number; error: () => GatewayError }
  /** Streams one part, then waits for the test to release the rest. */
  | { kind: "pause-after-first"; release: Promise<void> };

const unavailable = () => new GatewayError("provider_unavailable", "HTTP 503", { upstreamStatus: 503 });
const overloaded = () => new GatewayError("provider_overloaded", "HTTP 529", { upstreamStatus: 529 });
const invalid = () => GatewayError.invalidRequest("bad request upstream");

const USAGE: CanonicalUsage = {
  inputTokens: 10,
  outputTokens: 5,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};

/** A provider adapter following a script per provider id; records every call. */
class ScriptedAdapter implements ProviderAdapter {
  readonly kind = "openai-compatible";
  readonly inputRules = { imageTokens: 1_000, pdfPageTokens: 1_000, tokenizer: "o200k" } as never;
  readonly calls: string[] = [];
  constructor(private readonly scripts: Record<string, Step[]>) {}

  private next(call: UpstreamCall): Step {
    this.calls.push(call.provider.id);
    const script = this.scripts[call.provider.id] ?? [];
    return script.length > 1 ? (script.shift() as Step) : (script[0] ?? { kind: "ok" });
  }

  async generate(call: UpstreamCall): Promise<CanonicalResult> {
    const step = this.next(call);
    if (step.kind === "fail") throw step.error();
    if (step.kind === "hang") return waitForAbort(call.signal);
    if (step.kind === "slow-fail") throw step.error();
    return {
      content: [{ type: "text", text: "text" in step ? step.text : "hello" }],
      finishReason: "stop",
      upstreamModel: call.upstreamModel,
      usage: { ...USAGE, ...(step.kind === "ok" ? step.usage : {}) },
    } as CanonicalResult;
  }

  async *stream(call: UpstreamCall): AsyncIterable<CanonicalStreamPart> {
    const step = this.next(call);
    if (step.kind === "fail") throw step.error();
    if (step.kind === "hang") await waitForAbort(call.signal);
    if (step.kind === "slow-fail") {
      await new Promise((resolve) => setTimeout(resolve, step.afterMs));
      throw step.error();
    }
    yield { type: "text-start", id: "t" };
    yield { type: "text-delta", id: "t", delta: "text" in step && step.text ? step.text : "hello" };
    if (step.kind === "fail-after-first") {
      yield { type: "error", error: { code: "provider_unavailable", message: "connection reset" } };
      return;
    }
    if (step.kind === "pause-after-first") await Promise.race([step.release, waitForAbort(call.signal)]);
    yield { type: "text-end", id: "t" };
    yield { type: "usage", usage: { ...USAGE, ...(step.kind === "ok" ? step.usage : {}) } };
    yield { type: "finish", reason: "stop" };
  }
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

const provider = (id: string) => ({
  id,
  kind: "openai-compatible",
  base_url: `http://127.0.0.1:9/${id}`,
  timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, response_ms: 1_000, idle_ms: 1_000 },
});
const model = (slug: string, routes: string[], pricing = { prompt: "1", completion: "2" }) => ({
  slug,
  name: slug,
  provider: { slug: "test", name: "Test" },
  description: "",
  release_date: "2026-01-01",
  context_length: 100_000,
  max_output_tokens: 1_000,
  pricing,
  features: ["streaming"],
  datacenter_locations: ["local"],
  routes: routes.map((id) => ({ provider: id, model: `${id}-upstream` })),
});

const CONFIG = buildConfig(
  {
    providers: ["a", "b", "c", "d"].map(provider),
    models: [
      model("test/main", ["a", "b", "c"]),
      model("test/single", ["a"]),
      model("test/alt", ["d"], { prompt: "3", completion: "30" }),
      model("test/forbidden", ["d"]),
    ],
  },
  {},
);

interface Harness {
  engine: GenerationEngine;
  adapter: ScriptedAdapter;
  /** Every final record written, by request id. */
  finishes: Map<string, GenerationOutcome[]>;
  /** Every reservation settlement, by request id. */
  settled: Map<string, number[]>;
  reserved: Map<string, number>;
  run(
    request: Partial<CanonicalRequest>,
    signal?: AbortSignal,
    firstPartWaitMs?: number,
  ): Promise<GenerationRun>;
  /** The one final record of the last request (asserts there was exactly one). */
  only(): GenerationOutcome;
}

let nextId = 0;

function createHarness(
  scripts: Record<string, Step[]>,
  options: {
    policy?: Partial<RetryPolicy>;
    allowed?: string[];
    breakerFailures?: number;
    cooldownMs?: number;
  } = {},
): Harness {
  const adapter = new ScriptedAdapter(scripts);
  const finishes = new Map<string, GenerationOutcome[]>();
  const settled = new Map<string, number[]>();
  const reserved = new Map<string, number>();
  let lastId = "";
  const spendGuard = {
    mode: "in-process",
    async admit(input: { requestId: string; worstCase: { amountMicroUsd: number; outputCap: number } }) {
      reserved.set(input.requestId, input.worstCase.amountMicroUsd);
      return {
        admittedAt: Date.now(),
        amountMicroUsd: input.worstCase.amountMicroUsd,
        outputCap: input.worstCase.outputCap,
        outputCapLowered: false,
        async settle(cost: number) {
          settled.set(input.requestId, [...(settled.get(input.requestId) ?? []), cost]);
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
        async finish(id, outcome) {
          finishes.set(id, [...(finishes.get(id) ?? []), structuredClone(outcome)]);
        },
      },
    },
    adapters: new Map([["openai-compatible", adapter]]),
    logger: { warn() {}, error() {}, info() {} } as unknown as Logger,
    spendGuard,
    retryPolicy: {
      retries: 1,
      baseDelayMs: 5,
      maxRetryAfterMs: 200,
      failoverDeadlineMs: 5_000,
      ...options.policy,
    },
    breakerPolicy: { failures: options.breakerFailures ?? 100, cooldownMs: options.cooldownMs ?? 60_000 },
    random: () => 0.5,
  });
  const caller = {
    key: { id: "key", source: "api", allowedModels: options.allowed ?? null },
    workspace: { id: "ws", invoicing: true, locked: false, balanceMicroUsd: 1_000_000 },
    limits: {},
  } as unknown as AdmittedCaller;
  return {
    engine,
    adapter,
    finishes,
    settled,
    reserved,
    async run(request, signal = new AbortController().signal, firstPartWaitMs = 1_000) {
      lastId = `req-${++nextId}`;
      const admitted = await engine.admit({
        requestId: lastId,
        format: "chat_completions",
        caller,
        request: createTestRequest({ model: "test/main", ...request }),
        startedAt: performance.now(),
      });
      return engine.run(admitted, signal, firstPartWaitMs);
    },
    only() {
      const records = finishes.get(lastId) ?? [];
      assert.equal(records.length, 1, `exactly one final record for ${lastId}`);
      assert.equal(settled.get(lastId)?.length, 1, `the reservation settled exactly once for ${lastId}`);
      return records[0];
    },
  };
}

async function drain(run: GenerationRun): Promise<CanonicalStreamPart[]> {
  const parts: CanonicalStreamPart[] = [];
  for await (const part of run.parts()) parts.push(part);
  await run.settle();
  return parts;
}

const outcomesOf = (outcome: GenerationOutcome) => outcome.attempts?.map((a) => `${a.provider}:${a.outcome}`);

for (const stream of [false, true]) {
  const mode = stream ? "streamed" : "non-streamed";

  test(`${mode}: a fixable failure moves to the next route, in catalog order; only the serving attempt is billed`, async () => {
    const h = createHarness({ a: [{ kind: "fail", error: unavailable }], b: [{ kind: "ok" }] });
    const run = await h.run({ stream });
    if (stream) await drain(run);
    const outcome = h.only();
    assert.deepEqual(h.adapter.calls, ["a", "b"]);
    assert.deepEqual(outcomesOf(outcome), ["a:provider_unavailable", "b:ok"]);
    assert.equal(outcome.status, "ok");
    assert.equal(outcome.upstreamProvider, "b");
    // 10 prompt tokens at 1 $/M and 5 completion at 2 $/M: one serving attempt's usage, once.
    assert.equal(outcome.costMicroUsd, 20);
    assert.deepEqual([...h.settled.values()].at(-1), [20], "the reservation settles at that cost");
  });

  test(`${mode}: invalid_request, context_length_exceeded and content_filter are final: no other route is tried`, async () => {
    for (const code of ["invalid_request", "context_length_exceeded", "content_filter"] as const) {
      const h = createHarness({ a: [{ kind: "fail", error: () => new GatewayError(code, "no") }] });
      await assert.rejects(h.run({ stream }), (error: GatewayError) => error.code === code);
      assert.deepEqual(h.adapter.calls, ["a"]);
      const outcome = h.only();
      assert.equal(outcome.status, "error");
      assert.equal(outcome.errorCode, code);
      assert.equal(outcome.costMicroUsd, 0);
    }
  });

  test(`${mode}: retries are bounded; all candidates failing gives the last classified error`, async () => {
    const h = createHarness({ a: [{ kind: "fail", error: unavailable }] }, { policy: { retries: 2 } });
    await assert.rejects(h.run({ stream, model: "test/single" }), (error: GatewayError) => {
      assert.equal(error.code, "provider_unavailable");
      assert.equal(error.retryAfterSeconds, 1);
      return true;
    });
    assert.deepEqual(h.adapter.calls, ["a", "a", "a"]);
    const outcome = h.only();
    assert.equal(outcome.attempts?.length, 3);
    assert.equal(outcome.costMicroUsd, 0);

    const none = createHarness(
      {
        a: [{ kind: "fail", error: overloaded }],
        b: [{ kind: "fail", error: unavailable }],
        c: [{ kind: "fail", error: overloaded }],
      },
      { policy: { retries: 0 } },
    );
    await assert.rejects(none.run({ stream }), (error: GatewayError) => error.code === "provider_overloaded");
    assert.deepEqual(none.adapter.calls, ["a", "b", "c"]);
  });

  test(`${mode}: Retry-After is honoured up to the cap; past it the route is not tried again`, async () => {
    const asked = (seconds: number) => () =>
      new GatewayError("provider_rate_limit", "HTTP 429", {
        upstreamStatus: 429,
        retryAfterSeconds: seconds,
      });
    const h = createHarness(
      { a: [{ kind: "fail", error: asked(0.1) }, { kind: "ok" }] },
      { policy: { maxRetryAfterMs: 500 } },
    );
    const started = performance.now();
    const run = await h.run({ stream, model: "test/single" });
    if (stream) await drain(run);
    assert.ok(performance.now() - started >= 95, "waited what the upstream asked");
    assert.deepEqual(h.adapter.calls, ["a", "a"]);
    assert.equal(h.only().status, "ok");

    const capped = createHarness(
      { a: [{ kind: "fail", error: asked(30) }, { kind: "ok" }] },
      { policy: { maxRetryAfterMs: 500 } },
    );
    const before = performance.now();
    await assert.rejects(capped.run({ stream, model: "test/single" }), (error: GatewayError) => {
      assert.equal(error.code, "provider_rate_limit");
      assert.equal(error.retryAfterSeconds, 30, "the caller is told what the upstream asked");
      return true;
    });
    assert.ok(performance.now() - before < 400, "did not wait 30 s");
    assert.deepEqual(capped.adapter.calls, ["a"]);
  });

  test(`${mode}: an open breaker skips its route without calling it; a probe after the cool-down closes it`, async () => {
    const h = createHarness(
      {
        a: [{ kind: "fail", error: unavailable }, { kind: "fail", error: unavailable }, { kind: "ok" }],
        b: [{ kind: "ok" }],
      },
      { breakerFailures: 2, cooldownMs: 80, policy: { retries: 0 } },
    );
    for (let i = 0; i < 2; i++) {
      const run = await h.run({ stream });
      if (stream) await drain(run);
    }
    assert.deepEqual(h.adapter.calls, ["a", "b", "a", "b"]);
    const skipped = await h.run({ stream });
    if (stream) await drain(skipped);
    assert.deepEqual(h.adapter.calls.slice(4), ["b"], "route a is open: not called");
    assert.deepEqual(outcomesOf(h.only()), ["a:circuit_open", "b:ok"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const probe = await h.run({ stream });
    if (stream) await drain(probe);
    assert.deepEqual(h.adapter.calls.slice(5), ["a"], "half-open: one probe, which serves");
    const closed = await h.run({ stream });
    if (stream) await drain(closed);
    assert.deepEqual(h.adapter.calls.slice(6), ["a"], "closed again");
  });

  test(`${mode}: a fallback never reaches a model the key may not use`, async () => {
    const h = createHarness({ a: [{ kind: "fail", error: unavailable }] }, { allowed: ["test/main"] });
    await assert.rejects(h.run({ stream, models: ["test/forbidden"] }), (error: GatewayError) => {
      assert.equal(error.code, "model_not_allowed");
      assert.equal(error.param, "models[0]");
      return true;
    });
    await assert.rejects(h.run({ stream, models: ["test/nope"] }), (error: GatewayError) => {
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, "models[0]");
      return true;
    });
    assert.deepEqual(h.adapter.calls, [], "nothing was sent");
    assert.equal(h.finishes.size, 0);
  });

  test(`${mode}: a named alternative serves when the model's routes fail; the reservation covered the dearest`, async () => {
    const h = createHarness(
      {
        a: [{ kind: "fail", error: unavailable }],
        b: [{ kind: "fail", error: overloaded }],
        c: [{ kind: "fail", error: unavailable }],
        d: [{ kind: "ok" }],
      },
      { policy: { retries: 0 } },
    );
    const run = await h.run({ stream, models: ["test/alt"] });
    if (stream) await drain(run);
    assert.equal(run.servedBy?.model.slug, "test/alt");
    const outcome = h.only();
    assert.deepEqual(outcomesOf(outcome), [
      "a:provider_unavailable",
      "b:provider_overloaded",
      "c:provider_unavailable",
      "d:ok",
    ]);
    // At test/alt's prices: 10 × 3 + 5 × 30.
    assert.equal(outcome.costMicroUsd, 180);
    const [reserved] = [...h.reserved.values()];
    // The full output cap (1,000 tokens) at the dearest completion rate is in the reservation.
    assert.ok(reserved >= 30_000, `reserved ${reserved}`);
  });

  test(`${mode}: a client gone before the first call settles once as cancelled, billing nothing`, async () => {
    const h = createHarness({});
    const gone = new AbortController();
    gone.abort(new Error("client disconnected"));
    await assert.rejects(h.run({ stream }, gone.signal));
    assert.deepEqual(h.adapter.calls, []);
    const outcome = h.only();
    assert.equal(outcome.status, "cancelled");
    assert.equal(outcome.costMicroUsd, 0);
  });

  test(`${mode}: a client gone while waiting for the upstream settles once as cancelled, billing the prompt`, async () => {
    const h = createHarness({ a: [{ kind: "hang" }] });
    const gone = new AbortController();
    // The client leaves once the upstream was called, however long the loaded machine took to get there.
    const leaveAfterFirstCall = setInterval(() => {
      if (h.adapter.calls.length === 0) return;
      clearInterval(leaveAfterFirstCall);
      gone.abort(new Error("client disconnected"));
    }, 5);
    await assert.rejects(h.run({ stream }, gone.signal));
    clearInterval(leaveAfterFirstCall);
    assert.deepEqual(h.adapter.calls, ["a"], "no failover for a caller that left");
    const outcome = h.only();
    assert.equal(outcome.status, "cancelled");
    assert.ok(outcome.tokensPrompt > 0, "the prompt the upstream likely processed is billed");
    assert.equal(outcome.tokensCompletion, 0);
    assert.deepEqual(outcomesOf(outcome), ["a:cancelled"]);
  });

  test(`${mode}: a client gone between attempts (during the backoff) settles once as cancelled`, async () => {
    const h = createHarness(
      { a: [{ kind: "fail", error: unavailable }] },
      { policy: { baseDelayMs: 8_000, retries: 1, failoverDeadlineMs: 60_000 } },
    );
    const gone = new AbortController();
    // The client leaves once the first attempt has failed, so the run is in its backoff (4 s at
    // the harness's fixed jitter), whatever the machine's load made of the time before.
    let leftAt = 0;
    const leaveAfterFirstCall = setInterval(() => {
      if (h.adapter.calls.length === 0) return;
      clearInterval(leaveAfterFirstCall);
      leftAt = performance.now();
      gone.abort(new Error("client disconnected"));
    }, 5);
    await assert.rejects(h.run({ stream, model: "test/single" }, gone.signal));
    clearInterval(leaveAfterFirstCall);
    assert.ok(leftAt > 0, "the first attempt was made before the client left");
    assert.ok(performance.now() - leftAt < 3_000, "the backoff ended with the client");
    assert.deepEqual(h.adapter.calls, ["a"]);
    const outcome = h.only();
    assert.equal(outcome.status, "cancelled");
    assert.equal(outcome.costMicroUsd, 0, "no call was in flight: nothing processed, nothing billed");
  });
}

test("streamed: an error after the first part does not fail over; what was delivered is billed, once", async () => {
  const h = createHarness({ a: [{ kind: "fail-after-first", text: "partial answer" }], b: [{ kind: "ok" }] });
  const run = await h.run({ stream: true });
  const parts = await drain(run);
  assert.equal(parts.at(-1)?.type, "error");
  assert.deepEqual(h.adapter.calls, ["a"]);
  const outcome = h.only();
  assert.equal(outcome.status, "error");
  assert.equal(outcome.errorCode, "provider_unavailable");
  assert.ok(outcome.tokensCompletion > 0, "the delivered text is billed");
  assert.ok(outcome.costMicroUsd > 0);
  assert.deepEqual(outcomesOf(outcome), ["a:provider_unavailable"]);
});

test("streamed: a client gone mid-stream settles once as cancelled, without the writer asking", async () => {
  let release!: () => void;
  const h = createHarness({
    a: [{ kind: "pause-after-first", release: new Promise<void>((r) => (release = r)) }],
  });
  const gone = new AbortController();
  const run = await h.run({ stream: true }, gone.signal);
  const iterator = run.parts()[Symbol.asyncIterator]();
  await iterator.next(); // text-start
  await iterator.next(); // text-delta
  gone.abort(new Error("client disconnected"));
  release();
  await run.settle();
  const outcome = h.only();
  assert.equal(outcome.status, "cancelled");
  assert.ok(outcome.tokensCompletion > 0);
  assert.deepEqual(outcomesOf(outcome), ["a:cancelled"]);
  assert.equal((await iterator.next()).done, true);
  await new Promise((resolve) => setTimeout(resolve, 10));
  h.only();
});

test("streamed: a writer or encoder that throws mid-stream still settles the run once, as an error", async () => {
  const h = createHarness({ a: [{ kind: "ok", text: "some text" }] });
  const run = await h.run({ stream: true });
  await assert.rejects(async () => {
    for await (const part of run.parts()) {
      if (part.type === "text-delta") throw new Error("encoder bug");
    }
  });
  await run.settle();
  await new Promise((resolve) => setTimeout(resolve, 10));
  const outcome = h.only();
  assert.equal(outcome.status, "error");
  assert.equal(outcome.errorCode, "internal_error");
});

test("a breaker: closed until the failures in a row, open for the cool-down, one probe half-open", () => {
  let now = 0;
  const breakers = new CircuitBreakers({ failures: 3, cooldownMs: 1_000 }, () => now);
  breakers.recordFailure("r");
  breakers.recordFailure("r");
  breakers.recordSuccess("r");
  breakers.recordFailure("r");
  breakers.recordFailure("r");
  assert.equal(breakers.state("r"), "closed", "a success resets the count");
  breakers.recordFailure("r");
  assert.equal(breakers.state("r"), "open");
  assert.equal(breakers.tryAcquire("r"), false);
  now = 1_000;
  assert.equal(breakers.state("r"), "half-open");
  assert.equal(breakers.tryAcquire("r"), true, "the probe");
  assert.equal(breakers.tryAcquire("r"), false, "only one probe at a time");
  breakers.recordFailure("r");
  assert.equal(breakers.state("r"), "open", "a failed probe opens it again");
  now = 2_000;
  assert.equal(breakers.tryAcquire("r"), true);
  breakers.recordSuccess("r");
  assert.equal(breakers.state("r"), "closed");
  assert.equal(breakers.tryAcquire("r"), true);
});

test("streamed: a response started before its first part still fails over when the route fails before any part", async () => {
  const timeout = () => new GatewayError("provider_timeout", "first-byte deadline");
  const h = createHarness({
    a: [{ kind: "slow-fail", afterMs: 60, error: timeout }],
    b: [{ kind: "ok", text: "from b" }],
  });
  const run = await h.run({ stream: true }, undefined, 20);
  assert.equal(run.startedBeforeFirstPart, true, "the response started without the first part");
  const parts = await drain(run);
  const text = parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");
  assert.equal(text, "from b");
  assert.deepEqual(h.adapter.calls, ["a", "b"]);
  const outcome = h.only();
  assert.equal(outcome.status, "ok");
  assert.equal(outcome.upstreamProvider, "b");
  assert.deepEqual(outcomesOf(outcome), ["a:provider_timeout", "b:ok"]);
  assert.equal(outcome.costMicroUsd, 20, "only the serving attempt is billed");
});

test("streamed: started before its first part, every route failing ends with the last error in-band, once", async () => {
  const timeout = () => new GatewayError("provider_timeout", "first-byte deadline");
  const h = createHarness(
    {
      a: [{ kind: "slow-fail", afterMs: 40, error: timeout }],
      b: [{ kind: "slow-fail", afterMs: 40, error: timeout }],
      c: [{ kind: "fail", error: invalid }],
    },
    { policy: { retries: 0 } },
  );
  const run = await h.run({ stream: true }, undefined, 10);
  const parts = await drain(run);
  const last = parts.at(-1);
  assert.equal(last?.type, "error");
  assert.equal(last?.type === "error" && last.error.code, "invalid_request");
  const outcome = h.only();
  assert.equal(outcome.status, "error");
  assert.equal(outcome.costMicroUsd, 0);
  assert.deepEqual(outcomesOf(outcome), ["a:provider_timeout", "b:provider_timeout", "c:invalid_request"]);
});

test("every route skipped by its breaker: no call, and the caller is told what the route last failed with", async () => {
  const refused = () => new GatewayError("provider_auth", "credentials refused", { upstreamStatus: 401 });
  const h = createHarness({ a: [{ kind: "fail", error: refused }] }, { breakerFailures: 2 });
  for (let i = 0; i < 2; i++) {
    await assert.rejects(
      h.run({ model: "test/single" }),
      (error: GatewayError) => error.code === "provider_auth",
    );
  }
  assert.deepEqual(h.adapter.calls, ["a", "a"], "provider_auth is not retried on the same route");
  await assert.rejects(
    h.run({ model: "test/single" }),
    (error: GatewayError) => error.code === "provider_auth",
  );
  assert.deepEqual(h.adapter.calls, ["a", "a"], "the open route was not called");
  assert.deepEqual(outcomesOf(h.only()), ["a:circuit_open"]);
});
