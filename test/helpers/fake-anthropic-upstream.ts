/**
 * A scriptable loopback server that speaks the Anthropic Messages wire format,
 * for tests of anything that calls an `anthropic` upstream.
 *
 * Usage:
 * ```ts
 * const upstream = await startFakeAnthropicUpstream();
 * // provider config: { kind: "anthropic", baseUrl: upstream.baseUrl, ... }   (http://127.0.0.1:<port>/v1)
 * upstream.enqueue(anthropicReply.sse(buildTextStream(["Hel", "lo"])));   // next request streams
 * upstream.enqueue(anthropicReply.json(buildMessage({ content: [{ type: "text", text: "Hi" }] })));
 * upstream.enqueue(anthropicReply.overloaded());                           // 529 overloaded_error
 * upstream.enqueue(anthropicReply.error(429, "rate_limit_error", "slow down", { "retry-after": "7" }));
 * ... exercise the code ...
 * assert.equal(upstream.requests[0].headers["anthropic-version"], "2023-06-01");
 * await upstream.close();
 * ```
 *
 * The server, the queue, request recording, `hang` / `closeSocket` replies and mid-stream steps
 * are those of `fake-openai-upstream.ts` (one loopback server implementation for all fakes);
 * this module adds the Anthropic framing and bodies:
 * - SSE frames carry an `event:` line (the name is `data.type` unless a step names another one),
 *   as ant-sdk requires; there is no `[DONE]` terminator, the stream just ends after `message_stop`.
 * - `padding: true` pads every `data:` JSON with trailing spaces before its last brace, and
 *   {@link pingEvent} writes `{"type": "ping"}` with a space, as the real API does.
 * - Errors use Anthropic's envelope `{type:"error", error:{type, message}, request_id}` with a
 *   `request-id` header; {@link anthropicReply.overloaded} is the 529 `overloaded_error`.
 * When the queue is empty and no handler is set, requests get a text answer (streamed when the
 * body has `stream: true`) saying {@link DEFAULT_ANTHROPIC_REPLY_TEXT}.
 */
import {
  type FakeHandler,
  type FakeOpenAiUpstream,
  type FakeReply,
  fakeReply,
  type RecordedRequest,
  type SseStep,
  startFakeOpenAiUpstream,
} from "./fake-openai-upstream.js";

export type { FakeHandler, FakeReply, RecordedRequest };

/** Same surface as the OpenAI fake: `baseUrl` is `http://127.0.0.1:<port>/v1`. */
export type FakeAnthropicUpstream = FakeOpenAiUpstream;

/**
 * One step of a scripted stream: an event (`{ data }`, named by `event` or else `data.type`), or
 * the shared steps `{ raw }`, `{ delayMs }`, `{ closeSocket: true }`, `{ hang: true }`. A plain
 * object with a `type` field is taken as an event's data.
 */
export type AnthropicSseStep = { event?: string; data: unknown } | Exclude<SseStep, { data: unknown }>;

interface ReplyInit {
  status?: number;
  headers?: Record<string, string>;
}

export const DEFAULT_ANTHROPIC_REPLY_TEXT = "Hello from the fake Anthropic upstream.";
export const FAKE_MESSAGE_ID = "msg_01FakeUpstream000000000001";
export const FAKE_MODEL = "claude-fake-4-5-20250101";
export const FAKE_REQUEST_ID = "req_011FakeUpstream0000000001";

export const anthropicReply = {
  json: (body: unknown, init: ReplyInit = {}): FakeReply => fakeReply.json(body, init),
  sse: (
    steps: Array<AnthropicSseStep | Record<string, unknown>>,
    init: ReplyInit & { padding?: boolean } = {},
  ): FakeReply => ({
    kind: "sse",
    steps: steps.map((step, position) => toSharedStep(step, init.padding === true ? position : undefined)),
    done: false,
    ...(init.status === undefined ? {} : { status: init.status }),
    ...(init.headers === undefined ? {} : { headers: init.headers }),
  }),
  raw: (
    body: string | Buffer,
    init: ReplyInit & { chunkSize?: number; chunkDelayMs?: number } = {},
  ): FakeReply => fakeReply.raw(body, init),
  /** An HTTP error in Anthropic's envelope; `headers` add to (or replace) `request-id`. */
  error: (status: number, type: string, message: string, headers: Record<string, string> = {}): FakeReply =>
    fakeReply.error(status, buildErrorBody(type, message), { "request-id": FAKE_REQUEST_ID, ...headers }),
  overloaded: (headers: Record<string, string> = {}): FakeReply =>
    anthropicReply.error(529, "overloaded_error", "Overloaded", headers),
  hang: (): FakeReply => fakeReply.hang(),
  closeSocket: (): FakeReply => fakeReply.closeSocket(),
};

export async function startFakeAnthropicUpstream(
  options: { handler?: FakeHandler } = {},
): Promise<FakeAnthropicUpstream> {
  const upstream = await startFakeOpenAiUpstream({ handler: options.handler ?? createDefaultReply });
  return { ...upstream, setHandler: (handler) => upstream.setHandler(handler ?? createDefaultReply) };
}

export function buildErrorBody(type: string, message: string): Record<string, unknown> {
  return { type: "error", error: { type, message }, request_id: FAKE_REQUEST_ID };
}

/** A usage object as the API sends it (every counter present, the cache split included). */
export function buildUsage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    input_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: 5,
    service_tier: "standard",
    ...overrides,
  };
}

/** A complete non-streamed `message` body. */
export function buildMessage(
  options: {
    content?: Array<Record<string, unknown>>;
    stopReason?: string | null;
    stopSequence?: string | null;
    usage?: Record<string, unknown>;
    model?: string;
    id?: string;
  } = {},
): Record<string, unknown> {
  const content = options.content ?? [{ type: "text", text: DEFAULT_ANTHROPIC_REPLY_TEXT }];
  return {
    id: options.id ?? FAKE_MESSAGE_ID,
    type: "message",
    role: "assistant",
    model: options.model ?? FAKE_MODEL,
    content,
    stop_reason:
      options.stopReason === undefined
        ? content.some((block) => block.type === "tool_use")
          ? "tool_use"
          : "end_turn"
        : options.stopReason,
    stop_sequence: options.stopSequence ?? null,
    usage: options.usage ?? buildUsage(),
  };
}

export function messageStartEvent(
  options: { id?: string; model?: string; usage?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    type: "message_start",
    message: {
      id: options.id ?? FAKE_MESSAGE_ID,
      type: "message",
      role: "assistant",
      model: options.model ?? FAKE_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: options.usage ?? buildUsage({ output_tokens: 1 }),
    },
  };
}

/** `content_block_start` (text ""), one `text_delta` per piece, `content_block_stop`. */
export function textBlockEvents(index: number, pieces: string[]): Array<Record<string, unknown>> {
  return [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...pieces.map((text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index },
  ];
}

/** A thinking block: thinking deltas, the trailing empty one, then the single signature_delta. */
export function thinkingBlockEvents(
  index: number,
  pieces: string[],
  signature: string,
): Array<Record<string, unknown>> {
  return [
    { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
    ...[...pieces, ""].map((thinking) => ({
      type: "content_block_delta",
      index,
      delta: { type: "thinking_delta", thinking },
    })),
    { type: "content_block_delta", index, delta: { type: "signature_delta", signature } },
    { type: "content_block_stop", index },
  ];
}

/** A redacted_thinking block: complete at start, no deltas. */
export function redactedThinkingBlockEvents(index: number, data: string): Array<Record<string, unknown>> {
  return [
    { type: "content_block_start", index, content_block: { type: "redacted_thinking", data } },
    { type: "content_block_stop", index },
  ];
}

/** A tool_use block: `input: {}` at start, one `input_json_delta` per fragment (`[""]` for no args). */
export function toolUseBlockEvents(
  index: number,
  tool: { id: string; name: string; fragments: string[] },
): Array<Record<string, unknown>> {
  return [
    {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} },
    },
    ...tool.fragments.map((partial_json) => ({
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json },
    })),
    { type: "content_block_stop", index },
  ];
}

export function messageDeltaEvent(
  options: { stopReason?: string | null; stopSequence?: string | null; usage?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    type: "message_delta",
    delta: {
      stop_reason: options.stopReason === undefined ? "end_turn" : options.stopReason,
      stop_sequence: options.stopSequence ?? null,
    },
    usage: options.usage ?? { output_tokens: 5 },
  };
}

export function messageStopEvent(): Record<string, unknown> {
  return { type: "message_stop" };
}

/** An in-stream error (sent after HTTP 200), e.g. `overloaded_error` / `Overloaded`. */
export function errorEvent(type = "overloaded_error", message = "Overloaded"): Record<string, unknown> {
  return { type: "error", error: { type, message } };
}

/** The API's ping, byte for byte (note the space after the colon). */
export function pingEvent(): AnthropicSseStep {
  return { raw: 'event: ping\ndata: {"type": "ping"}\n\n' };
}

/** A whole text stream: message_start, one text block, ping, message_delta, message_stop. */
export function buildTextStream(
  pieces: string[],
  options: {
    stopReason?: string | null;
    stopSequence?: string | null;
    startUsage?: Record<string, unknown>;
    deltaUsage?: Record<string, unknown>;
    model?: string;
    id?: string;
  } = {},
): AnthropicSseStep[] {
  const [start, ...rest] = textBlockEvents(0, pieces);
  return [
    { data: messageStartEvent({ id: options.id, model: options.model, usage: options.startUsage }) },
    { data: start },
    pingEvent(),
    ...rest.map((data) => ({ data })),
    {
      data: messageDeltaEvent({
        stopReason: options.stopReason,
        stopSequence: options.stopSequence,
        usage: options.deltaUsage,
      }),
    },
    { data: messageStopEvent() },
  ];
}

/** An SSE frame as the API writes it: `event:` line, `data:` line, blank line. */
export function frameEvent(name: string, data: unknown, paddingSpaces = 0): string {
  const json = typeof data === "string" ? data : JSON.stringify(data);
  const padded =
    paddingSpaces > 0 && json.endsWith("}") ? `${json.slice(0, -1)}${" ".repeat(paddingSpaces)}}` : json;
  return `event: ${name}\ndata: ${padded}\n\n`;
}

function toSharedStep(
  step: AnthropicSseStep | Record<string, unknown>,
  position: number | undefined,
): SseStep {
  const isEventData = typeof (step as { type?: unknown }).type === "string";
  if (!isEventData && !("data" in step)) return step as SseStep;
  const { event, data } = isEventData
    ? { event: undefined, data: step }
    : (step as { event?: string; data: unknown });
  const name = event ?? readType(data) ?? "message";
  // Varying widths, like the API's padding (1–9 spaces).
  const padding = position === undefined ? 0 : (position % 9) + 1;
  return { raw: frameEvent(name, data, padding) };
}

function readType(data: unknown): string | undefined {
  if (typeof data === "object" && data !== null && typeof (data as { type?: unknown }).type === "string") {
    return (data as { type: string }).type;
  }
  return undefined;
}

function createDefaultReply(request: RecordedRequest): FakeReply {
  if (request.body?.stream === true) {
    return anthropicReply.sse(buildTextStream([DEFAULT_ANTHROPIC_REPLY_TEXT]), { padding: true });
  }
  return anthropicReply.json(buildMessage());
}
