/**
 * A long streamed answer costs the gateway work in proportion to its length, whatever the provider
 * kind and the format it is re-encoded to (docs/performance.md, "Linear work per answer"). A real
 * gateway process with one loopback upstream of each provider kind (Chat Completions, Responses,
 * Anthropic Messages, Gemini) streams 64,000 deltas of 4 characters and 32,000 of 16 — an ordinary
 * long answer — into each of the three formats; the client must receive the whole text exactly,
 * and `GET /healthz` must keep answering within 100 ms of the machine's idle delay throughout
 * (measured from a worker thread, so the test's own work does not count). Code that re-reads the
 * answer so far at every delta stalls for seconds here.
 *
 * The upstream bodies are built once and written whole; the texts hold characters JSON must
 * escape and multi-byte UTF-8 ones, so network chunks split both.
 *
 * Also here, since it needs the same four upstreams: a Messages stream's `message_start` carries the
 * prompt's usage (LangChain's ChatAnthropic reads input tokens nowhere else), the upstream's when
 * it reported it before any content, else the gateway's estimate; `message_delta` the final count.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { startFakeAnthropicUpstream } from "../helpers/fake-anthropic-upstream.js";
import { startFakeGoogleUpstream } from "../helpers/fake-google-upstream.js";
import { startFakeOpenAiResponsesUpstream } from "../helpers/fake-openai-responses-upstream.js";
import {
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import { createFakeRoutesCatalog } from "../helpers/fake-routes-catalog.js";
import type { GatewayProcess } from "../helpers/gateway-process.js";
import type { HealthProbe } from "../helpers/health-prober.js";
import { startProbedGateway } from "../helpers/probed-gateway.js";

/** The slowest `/healthz` answer allowed beyond the idle one while a stream runs. */
const HEALTH_BOUND_MS = 100;
/** A stall this long is the gateway's doing, not the machine's: no second attempt. */
const CLEARLY_STALLED_MS = 1_000;
const REQUEST_TIMEOUT_MS = 60_000;

type Kind = "compat" | "responses" | "anthropic" | "gemini";
type Format = "chat" | "responses" | "messages";

const KINDS: Kind[] = ["compat", "responses", "anthropic", "gemini"];
const FORMATS: Format[] = ["chat", "responses", "messages"];
const SHAPES = [
  { count: 64_000, width: 4 },
  { count: 32_000, width: 16 },
];

const PATHS: Record<Format, string> = {
  chat: "/api/v1/chat/completions",
  responses: "/api/v1/responses",
  messages: "/api/v1/messages",
};

/** What the Anthropic upstream reports as the prompt in message_start. */
const ANTHROPIC_INPUT_TOKENS = 1_234;
/** What the other upstreams report as the prompt (Gemini on every chunk, the others at the end). */
const REPORTED_INPUT_TOKENS = 12;

interface Shape {
  name: string;
  text: string;
  /** The upstream body of each kind. */
  bodies: Record<Kind, Buffer>;
}

let upstreams: Record<Kind, FakeOpenAiUpstream>;
let gateway: GatewayProcess;
let probe: HealthProbe;
let apiKey: string;
let shapes: Shape[];
let cleanup: () => Promise<void>;
/** The body each upstream streams to the next request. */
const nextBodies = new Map<Kind, Buffer>();

before(async () => {
  shapes = SHAPES.map(({ count, width }) => {
    const pieces = createPieces(count, width);
    return {
      name: `${count.toLocaleString("en")} deltas of ${width} characters`,
      text: pieces.join(""),
      bodies: {
        compat: Buffer.from(buildChatBody(pieces)),
        responses: Buffer.from(buildResponsesBody(pieces)),
        anthropic: Buffer.from(buildAnthropicBody(pieces)),
        gemini: Buffer.from(buildGeminiBody(pieces)),
      },
    };
  });
  upstreams = {
    compat: await startFakeOpenAiUpstream(),
    responses: await startFakeOpenAiResponsesUpstream(),
    anthropic: await startFakeAnthropicUpstream(),
    gemini: await startFakeGoogleUpstream(),
  };
  for (const kind of KINDS) {
    upstreams[kind].setHandler(() => {
      const body = nextBodies.get(kind);
      if (body === undefined) throw new Error(`no stream set for ${kind}`);
      return fakeReply.raw(body, { headers: { "content-type": "text/event-stream" } });
    });
  }
  const started = await startProbedGateway(createConfig(upstreams), "long-streams");
  ({ gateway, apiKey, probe } = started);
  await warmUp();
  cleanup = async () => {
    await started.close();
    await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
  };
});

after(async () => {
  await cleanup?.();
});

function createConfig(fakes: Record<Kind, FakeOpenAiUpstream>) {
  return createFakeRoutesCatalog(
    [
      { id: "compat", kind: "openai-compatible", baseUrl: fakes.compat.baseUrl },
      { id: "responses", kind: "openai-responses", baseUrl: fakes.responses.baseUrl },
      { id: "anthropic", kind: "anthropic", baseUrl: fakes.anthropic.baseUrl },
      { id: "gemini", kind: "google", baseUrl: fakes.gemini.baseUrl },
    ],
    { contextLength: 1_000_000, pricing: { prompt: "1", completion: "2" } },
  );
}

/** Code that has never run is several times slower at first: every path runs once on a short stream. */
async function warmUp(): Promise<void> {
  const pieces = createPieces(2_000, 4);
  const text = pieces.join("");
  const bodies: Record<Kind, Buffer> = {
    compat: Buffer.from(buildChatBody(pieces)),
    responses: Buffer.from(buildResponsesBody(pieces)),
    anthropic: Buffer.from(buildAnthropicBody(pieces)),
    gemini: Buffer.from(buildGeminiBody(pieces)),
  };
  for (let round = 0; round < 2; round++) {
    for (const kind of KINDS) {
      nextBodies.set(kind, bodies[kind]);
      for (const format of FORMATS) {
        const received = await stream(kind, format);
        assert.equal(received.text, text, `warm-up ${kind} → ${format}`);
      }
    }
  }
}

/**
 * Characters drawn from an alphabet with ones JSON escapes (`"`, `\`, line ends, a tab) and
 * multi-byte UTF-8 ones (2 and 3 bytes; BMP only, so a piece of `width` is `width` UTF-16 units).
 */
function createPieces(count: number, width: number): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ.,;:!?0123456789"\\\n\täöüßé€→中文';
  const bytes = randomBytes(count * width);
  const pieces: string[] = new Array(count);
  for (let index = 0; index < count; index++) {
    let piece = "";
    for (let offset = 0; offset < width; offset++) {
      piece += alphabet[bytes[index * width + offset] % alphabet.length];
    }
    pieces[index] = piece;
  }
  return pieces;
}

function buildChatBody(pieces: string[]): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: {"id":"chatcmpl-long","object":"chat.completion.chunk","created":1700000000,"model":"compat-upstream-model","choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":null}\n\n`;
  const frames = [chunk({ role: "assistant", content: "" }, null)];
  for (const piece of pieces) frames.push(chunk({ content: piece }, null));
  frames.push(chunk({}, "stop"));
  frames.push(
    `data: {"id":"chatcmpl-long","object":"chat.completion.chunk","created":1700000000,"model":"compat-upstream-model","choices":[],"usage":{"prompt_tokens":${REPORTED_INPUT_TOKENS},"completion_tokens":64000,"total_tokens":64012}}\n\n`,
  );
  frames.push("data: [DONE]\n\n");
  return frames.join("");
}

function buildResponsesBody(pieces: string[]): string {
  let sequence = 0;
  const frames: string[] = [];
  const event = (type: string, members: string) =>
    frames.push(`event: ${type}\ndata: {"type":"${type}","sequence_number":${sequence++},${members}}\n\n`);
  const response = (status: string, output: string, usage: string) =>
    `"response":{"id":"resp_long","object":"response","created_at":1700000000,"status":"${status}","model":"responses-upstream-model","output":${output},"usage":${usage}}`;
  const text = JSON.stringify(pieces.join(""));
  const doneItem = `{"id":"msg_long","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":${text},"annotations":[]}]}`;
  event("response.created", response("in_progress", "[]", "null"));
  event("response.in_progress", response("in_progress", "[]", "null"));
  event(
    "response.output_item.added",
    `"output_index":0,"item":{"id":"msg_long","type":"message","status":"in_progress","role":"assistant","content":[]}`,
  );
  event(
    "response.content_part.added",
    `"item_id":"msg_long","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`,
  );
  for (const piece of pieces) {
    event(
      "response.output_text.delta",
      `"item_id":"msg_long","output_index":0,"content_index":0,"delta":${JSON.stringify(piece)}`,
    );
  }
  event(
    "response.output_text.done",
    `"item_id":"msg_long","output_index":0,"content_index":0,"text":${text}`,
  );
  event("response.output_item.done", `"output_index":0,"item":${doneItem}`);
  event(
    "response.completed",
    response(
      "completed",
      `[${doneItem}]`,
      `{"input_tokens":${REPORTED_INPUT_TOKENS},"input_tokens_details":{"cached_tokens":0},"output_tokens":64000,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":64012}`,
    ),
  );
  return frames.join("");
}

function buildAnthropicBody(pieces: string[]): string {
  const frames: string[] = [];
  const event = (type: string, json: string) => frames.push(`event: ${type}\ndata: ${json}\n\n`);
  event(
    "message_start",
    `{"type":"message_start","message":{"id":"msg_long","type":"message","role":"assistant","model":"anthropic-upstream-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${ANTHROPIC_INPUT_TOKENS},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
  );
  event(
    "content_block_start",
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  );
  event("ping", '{"type": "ping"}');
  for (const piece of pieces) {
    event(
      "content_block_delta",
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(piece)}}}`,
    );
  }
  event("content_block_stop", '{"type":"content_block_stop","index":0}');
  event(
    "message_delta",
    '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":64000}}',
  );
  event("message_stop", '{"type":"message_stop"}');
  return frames.join("");
}

function buildGeminiBody(pieces: string[]): string {
  const frames = pieces.map((piece, index) => {
    const finish = index === pieces.length - 1 ? ',"finishReason":"STOP"' : "";
    return `data: {"candidates":[{"content":{"parts":[{"text":${JSON.stringify(piece)}}],"role":"model"}${finish},"index":0}],"usageMetadata":{"promptTokenCount":${REPORTED_INPUT_TOKENS},"candidatesTokenCount":${index + 1},"totalTokenCount":${index + 1 + REPORTED_INPUT_TOKENS}},"modelVersion":"gemini-upstream-model","responseId":"long"}\r\n\r\n`;
  });
  return frames.join("");
}

interface Received {
  text: string;
  /** The stream's terminal event arrived (`[DONE]`, `response.completed`, `message_stop`). */
  terminated: boolean;
  /** Messages: the usage of `message_start` and of `message_delta`. */
  startUsage?: Record<string, number>;
  deltaUsage?: Record<string, number>;
}

/** Streams one answer from `kind` in `format` and reads the text the way a client assembles it. */
async function stream(kind: Kind, format: Format): Promise<Received> {
  const body = {
    model: `test/${kind}-model`,
    stream: true,
    ...(format === "responses"
      ? { input: "Tell me a long story.", max_output_tokens: 4_096 }
      : { messages: [{ role: "user", content: "Tell me a long story." }], max_tokens: 4_096 }),
  };
  const response = await fetch(`${gateway.url}${PATHS[format]}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  assert.equal(response.status, 200, `${kind} → ${format}: ${response.status}`);
  const pieces: string[] = [];
  const received: Received = { text: "", terminated: false };
  const onData = (data: string) => {
    if (format === "chat") {
      if (data === "[DONE]") {
        received.terminated = true;
        return;
      }
      const content = JSON.parse(data).choices?.[0]?.delta?.content;
      if (typeof content === "string") pieces.push(content);
      return;
    }
    const event = JSON.parse(data);
    if (format === "responses") {
      if (event.type === "response.output_text.delta") pieces.push(event.delta);
      else if (event.type === "response.completed") received.terminated = true;
      return;
    }
    if (event.type === "content_block_delta" && event.delta.type === "text_delta")
      pieces.push(event.delta.text);
    else if (event.type === "message_start") received.startUsage = event.message.usage;
    else if (event.type === "message_delta") received.deltaUsage = event.usage;
    else if (event.type === "message_stop") received.terminated = true;
  };
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf("\n\n");
    if (end === -1) {
      rest = text;
      continue;
    }
    for (const frame of text.slice(0, end).split("\n\n")) {
      for (const line of frame.split("\n")) if (line.startsWith("data: ")) onData(line.slice(6));
    }
    rest = text.slice(end + 2);
  }
  received.text = pieces.join("");
  return received;
}

interface Measured {
  received: Received;
  slowestMs: number;
  idleMs: number;
  probes: number;
  tookMs: number;
}

/** `/healthz`'s slowest answer over an idle moment: the machine's own delay. */
async function measureIdle(): Promise<number> {
  const idle = await probe.during(() => new Promise((resolve) => setTimeout(resolve, 100)));
  return idle.slowestMs;
}

async function measure(kind: Kind, format: Format): Promise<Measured> {
  const before = await measureIdle();
  const started = performance.now();
  const { result, slowestMs, probes } = await probe.during(() => stream(kind, format));
  const tookMs = performance.now() - started;
  // The machine's own delay around the stream: just before it and right after it.
  const idleMs = Math.max(before, await measureIdle());
  if (process.env.DEBUG_LONG_STREAMS) {
    console.log(
      `${kind} → ${format}: ${tookMs.toFixed(0)} ms; /healthz ${slowestMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms`,
    );
  }
  return { received: result, slowestMs, idleMs, probes, tookMs };
}

/**
 * Streams and checks the text; `/healthz` must stay within the bound over the idle delay. A late
 * answer short of a second (on a machine shared with other work a process that has the CPU for
 * only a few milliseconds can still wait a hundred for it) gets up to three more attempts, the
 * best one counting.
 */
async function expectLinear(kind: Kind, format: Format, shape: Shape): Promise<Received> {
  const what = `${kind} → ${format}, ${shape.name}`;
  let best: Measured | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    const measured = await measure(kind, format);
    assert.ok(measured.received.terminated, `${what}: the stream did not end with its terminal event`);
    // Not assert.equal: a diff of two 256 KB texts would drown the report.
    assert.ok(
      measured.received.text === shape.text,
      `${what}: received ${measured.received.text.length} characters, expected ${shape.text.length}` +
        ` (first difference at ${firstDifference(measured.received.text, shape.text)})`,
    );
    if (best === undefined || measured.slowestMs - measured.idleMs < best.slowestMs - best.idleMs) {
      best = measured;
    }
    const excess = measured.slowestMs - measured.idleMs;
    if (excess < HEALTH_BOUND_MS || measured.slowestMs > CLEARLY_STALLED_MS) break;
  }
  assert.ok(
    best !== undefined && best.slowestMs < HEALTH_BOUND_MS + best.idleMs,
    `${what}: /healthz took ${best?.slowestMs.toFixed(0)} ms to answer while it streamed ` +
      `(${best?.probes} probes, ${best?.idleMs.toFixed(0)} ms when idle; the stream took ${best?.tookMs.toFixed(0)} ms)`,
  );
  return best.received;
}

function firstDifference(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) if (a[index] !== b[index]) return index;
  return length;
}

for (const kind of KINDS) {
  test(`${kind} upstream: long answers reach every format whole while /healthz keeps answering`, async () => {
    for (const shape of shapes) {
      nextBodies.set(kind, shape.bodies[kind]);
      for (const format of FORMATS) await expectLinear(kind, format, shape);
    }
  });
}

test("messages: message_start carries the prompt's usage, the upstream's when it came first, else the estimate; message_delta the final count", async () => {
  const pieces = createPieces(200, 4);
  const bodies: Record<Kind, Buffer> = {
    compat: Buffer.from(buildChatBody(pieces)),
    responses: Buffer.from(buildResponsesBody(pieces)),
    anthropic: Buffer.from(buildAnthropicBody(pieces)),
    gemini: Buffer.from(buildGeminiBody(pieces)),
  };
  for (const kind of KINDS) {
    nextBodies.set(kind, bodies[kind]);
    const { startUsage, deltaUsage, text } = await stream(kind, "messages");
    assert.equal(text, pieces.join(""), kind);
    const reportedFirst = { anthropic: ANTHROPIC_INPUT_TOKENS, gemini: REPORTED_INPUT_TOKENS };
    const final = kind === "anthropic" ? ANTHROPIC_INPUT_TOKENS : REPORTED_INPUT_TOKENS;
    if (kind === "anthropic" || kind === "gemini") {
      assert.equal(
        startUsage?.input_tokens,
        reportedFirst[kind],
        `${kind}: message_start has the upstream's count`,
      );
    } else {
      // The gateway's estimate of "Tell me a long story." and the framing around it.
      assert.ok((startUsage?.input_tokens ?? 0) > 0, `${kind}: message_start ${JSON.stringify(startUsage)}`);
    }
    assert.equal(deltaUsage?.input_tokens, final, `${kind}: message_delta has the final count`);
  }
});
