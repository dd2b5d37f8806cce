/**
 * What a generation is billed when the upstream's usage is missing, partial or beyond the cap
 * (docs/metering.md): every provider kind estimates the same way and the record says so; a stream
 * the client leaves is billed the usage the upstream already reported; a stream that fails mid-way
 * shows the client what it is billed; no bill goes past the output cap sent upstream. A real
 * gateway (embedded) with one fake upstream per provider kind on loopback.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ProviderKind } from "../../src/catalog/types.js";
import { parseSseFrames } from "../conformance/support/wire-tap.js";
import {
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
  type UpstreamReply,
} from "../helpers/conformance-gateway.js";
import {
  anthropicReply,
  buildMessage,
  messageDeltaEvent,
  messageStartEvent,
  messageStopEvent,
  textBlockEvents,
} from "../helpers/fake-anthropic-upstream.js";
import {
  buildGeminiTextChunks,
  buildGenerateContentResponse,
  fakeGoogleReply,
} from "../helpers/fake-google-upstream.js";
import {
  buildResponse,
  buildResponseEvents,
  responsesReply,
} from "../helpers/fake-openai-responses-upstream.js";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  fakeReply,
} from "../helpers/fake-openai-upstream.js";
import { assertLedgerMatches } from "../helpers/money-checks.js";

const ANSWER = "The capital of France is Paris, a city on the Seine.";
const PROMPT = "What is the capital of France? Answer in one sentence.";

interface GenerationView {
  status: string;
  usage_estimated: boolean;
  tokens_prompt: number;
  tokens_completion: number;
  cost_micro_usd: string;
  error_code: string | null;
}

/** A text answer of `kind` carrying no usage (Anthropic: the zero counts a relay that meters nothing sends). */
function replyWithoutUsage(kind: ProviderKind, stream: boolean): UpstreamReply {
  switch (kind) {
    case "openai-compatible":
    case "openai-chat": {
      if (!stream) {
        const body = buildChatCompletion({ content: ANSWER });
        delete body.usage;
        return fakeReply.json(body);
      }
      return fakeReply.sse(buildTextChunks([ANSWER], { usage: null }));
    }
    case "openai-responses": {
      const spec = { items: [{ type: "message" as const, text: ANSWER }], usage: null };
      return stream
        ? responsesReply.sse(buildResponseEvents(spec))
        : responsesReply.json(buildResponse(spec));
    }
    case "anthropic": {
      const zero = { input_tokens: 0, output_tokens: 0 };
      if (!stream)
        return anthropicReply.json(buildMessage({ content: [{ type: "text", text: ANSWER }], usage: zero }));
      return anthropicReply.sse([
        messageStartEvent({ usage: zero }),
        ...textBlockEvents(0, [ANSWER]),
        messageDeltaEvent({ usage: { output_tokens: 0 } }),
        messageStopEvent(),
      ]);
    }
    case "google":
      return stream
        ? fakeGoogleReply.sse(buildGeminiTextChunks([ANSWER], { usage: null }))
        : fakeGoogleReply.json(buildGenerateContentResponse({ text: ANSWER, usage: null }));
  }
}

describe("metering when the upstream's usage is missing, partial or beyond the cap", () => {
  let context: ConformanceGateway;
  /** Σ cost of every record the tests read (each read once, final). */
  let billed = 0;
  before(async () => {
    context = await startConformanceGateway();
  });
  after(() => context.close());

  async function post(path: string, body: Record<string, unknown>, signal?: AbortSignal) {
    return fetch(`${context.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
  }

  async function readGeneration(id: string): Promise<GenerationView> {
    const response = await fetch(`${context.url}/api/v1/generation?id=${id}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as { data: GenerationView };
    assert.equal(response.status, 200, JSON.stringify(body));
    return body.data;
  }

  /** The record once final (a stream the client left settles a moment after the disconnect). */
  async function readFinal(id: string): Promise<GenerationView> {
    for (const deadline = Date.now() + 5_000; ; ) {
      const record = await readGeneration(id);
      if (record.status !== "in_progress" || Date.now() > deadline) {
        billed += Number(record.cost_micro_usd);
        return record;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const chat = (kind: ProviderKind, extra: Record<string, unknown> = {}) => ({
    model: `conformance/${kind}`,
    messages: [{ role: "user", content: PROMPT }],
    ...extra,
  });

  test("every provider kind estimates an answer whose upstream reported no usage, the same way, and the record says so", async () => {
    const estimates = new Set<string>();
    for (const kind of PROVIDER_KINDS) {
      for (const stream of [true, false]) {
        const cell = `${kind} ${stream ? "stream" : "non-stream"}`;
        context.upstreams[kind].serve(replyWithoutUsage(kind, stream));
        const response = await post("/api/v1/chat/completions", chat(kind, { stream }));
        const text = await response.text();
        assert.equal(response.status, 200, `${cell}: ${text}`);
        const record = await readFinal(response.headers.get("x-request-id")!);
        assert.equal(record.status, "ok", cell);
        assert.equal(record.usage_estimated, true, `${cell}: marked estimated`);
        assert.ok(
          record.tokens_prompt > 0 && record.tokens_completion > 0,
          `${cell}: ${JSON.stringify(record)}`,
        );
        assert.ok(Number(record.cost_micro_usd) > 0, cell);
        // The client is shown the usage it is billed.
        const usage = stream
          ? JSON.parse(parseSseFrames(text).at(-2)!.data).usage
          : (JSON.parse(text) as { usage: Record<string, number> }).usage;
        assert.equal(usage.prompt_tokens, record.tokens_prompt, cell);
        assert.equal(usage.completion_tokens, record.tokens_completion, cell);
        estimates.add(`${record.tokens_prompt}/${record.tokens_completion}/${record.cost_micro_usd}`);
      }
    }
    assert.equal(estimates.size, 1, `one estimate for one prompt and answer: ${[...estimates].join(", ")}`);
  });

  test("a stream the client leaves is billed the usage the upstream already reported", async () => {
    // Anthropic reports the prompt in message_start; the client leaves before message_stop.
    context.upstreams.anthropic.serve(
      anthropicReply.sse([
        messageStartEvent({ usage: { input_tokens: 5_000, output_tokens: 1 } }),
        ...textBlockEvents(0, [ANSWER]).slice(0, 2),
        { hang: true },
      ]),
    );
    // A chat upstream sent its final usage chunk, but not `[DONE]`, when the client leaves.
    context.upstreams["openai-compatible"].serve(
      fakeReply.sse(
        [
          buildChunk({ role: "assistant", content: "" }),
          buildChunk({ content: ANSWER }),
          buildChunk({}, { finishReason: "stop" }),
          buildUsageChunk({ prompt_tokens: 4_000, completion_tokens: 700, total_tokens: 4_700 }),
          { hang: true },
        ],
        { done: false },
      ),
    );
    const expected = {
      anthropic: { prompt: 5_000, estimated: true },
      "openai-compatible": { prompt: 4_000, completion: 700, estimated: false },
    } as const;
    for (const kind of ["anthropic", "openai-compatible"] as const) {
      const controller = new AbortController();
      const response = await post(
        "/api/v1/chat/completions",
        chat(kind, { stream: true }),
        controller.signal,
      );
      const reader = response.body!.getReader();
      let received = "";
      while (!received.includes("Paris")) received += new TextDecoder().decode((await reader.read()).value);
      // The rest of what the upstream sent reaches the gateway meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort();
      const record = await readFinal(response.headers.get("x-request-id")!);
      assert.equal(record.status, "cancelled", kind);
      assert.equal(record.tokens_prompt, expected[kind].prompt, `${kind}: the reported prompt`);
      if ("completion" in expected[kind]) assert.equal(record.tokens_completion, expected[kind].completion);
      else assert.ok(record.tokens_completion > 1, `${kind}: the delivered output's estimate`);
      assert.equal(record.usage_estimated, expected[kind].estimated, kind);
    }
  });

  test("a stream that fails mid-way shows the client what it is billed, in every format", async () => {
    const failing = () =>
      fakeReply.sse(
        [
          buildChunk({ role: "assistant", content: "" }),
          buildChunk({ content: ANSWER }),
          { delayMs: 50 },
          { closeSocket: true },
        ],
        { done: false },
      );
    const model = "conformance/openai-compatible";
    type Usage = Record<string, number>;
    type Frame = { type?: string; usage?: Usage; response?: { usage?: Usage | null } };
    const cells = [
      {
        path: "/api/v1/chat/completions",
        body: { model, messages: [{ role: "user", content: PROMPT }], stream: true },
        usageOf: (frames: Frame[]) => frames.findLast((frame) => frame.usage)?.usage,
        read: (usage: Usage) => [usage.prompt_tokens, usage.completion_tokens],
      },
      {
        path: "/api/v1/responses",
        body: { model, input: PROMPT, stream: true },
        usageOf: (frames: Frame[]) =>
          frames.find((frame) => frame.type === "response.failed")?.response?.usage ?? undefined,
        read: (usage: Usage) => [usage.input_tokens, usage.output_tokens],
      },
      {
        path: "/api/v1/messages",
        body: { model, max_tokens: 1000, messages: [{ role: "user", content: PROMPT }], stream: true },
        usageOf: (frames: Frame[]) => frames.find((frame) => frame.type === "error")?.usage,
        read: (usage: Usage) => [usage.input_tokens, usage.output_tokens],
      },
    ];
    for (const cell of cells) {
      context.upstreams["openai-compatible"].serve(failing());
      const response = await post(cell.path, cell.body);
      const frames = parseSseFrames(await response.text()).map((frame) => JSON.parse(frame.data) as Frame);
      const record = await readFinal(response.headers.get("x-request-id")!);
      assert.equal(record.status, "error", cell.path);
      assert.ok(Number(record.cost_micro_usd) > 0, `${cell.path}: delivered output is billed`);
      const usage = cell.usageOf(frames);
      assert.ok(usage, `${cell.path}: usage beside the error: ${JSON.stringify(frames.at(-1))}`);
      assert.deepEqual(cell.read(usage), [record.tokens_prompt, record.tokens_completion], cell.path);
      if (usage.cost !== undefined) assert.equal(usage.cost, Number(record.cost_micro_usd) / 1e6, cell.path);
    }
  });

  test("no bill goes past the output cap sent upstream, whatever the upstream reports", async () => {
    const huge = { prompt_tokens: 20, completion_tokens: 1_000_000, total_tokens: 1_000_020 };
    const upstream = context.upstreams["openai-compatible"];
    for (const stream of [false, true]) {
      upstream.serve(
        stream
          ? fakeReply.sse(buildTextChunks([ANSWER], { usage: huge }))
          : fakeReply.json(buildChatCompletion({ content: ANSWER, usage: huge })),
      );
      const response = await post(
        "/api/v1/chat/completions",
        chat("openai-compatible", { stream, max_tokens: 50 }),
      );
      await response.text();
      const record = await readFinal(response.headers.get("x-request-id")!);
      assert.equal(upstream.requests.at(-1)?.body.max_completion_tokens, 50);
      assert.equal(record.tokens_completion, 50, "billed at the cap");
      assert.equal(record.tokens_prompt, 20);
      // Tokens × USD per 1M tokens = micro-USD: $2/M prompt, $8/M completion.
      assert.equal(Number(record.cost_micro_usd), 20 * 2 + 50 * 8);
    }
  });

  test("the ledger equals the balance and what was billed; nothing is left reserved", async () => {
    await assertLedgerMatches({
      gatewayUrl: context.url,
      apiKey: context.apiKey,
      initialBalanceMicroUsd: 1_000_000_000,
      billedMicroUsd: billed,
    });
  });
});
