/**
 * The recorded wire traffic in `test/fixtures/recorded` (fixture-paths.ts) as
 * replies for the fake upstreams, each with what any client must end up with, computed from the
 * recording itself by a plain reading of its JSON — independent of the gateway's parsers.
 *
 * - Streams: `*.sse` / `*.response.sse` are served byte for byte. `*.chunks.txt` (one `data:`
 *   payload per line, framing stripped) are re-framed as the API frames them (fixtures README):
 *   Chat `data:` + `[DONE]`; Responses and Anthropic `event: <type>` + `data:`; Gemini CRLF `data:`.
 *   A Responses chunks file holding several responses back to back is split at each
 *   `response.created` into one recording per response.
 * - Bodies: `*.response.json` and the other `*.json` answers, served as JSON with the recorded
 *   HTTP status (manifest.json `http.status`; error bodies without one get the status of their
 *   error type).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderKind } from "../../../src/catalog/types.js";
import type { UpstreamReply } from "../../helpers/conformance-gateway.js";
import { RECORDED_DIR } from "../../helpers/fixture-paths.js";
import type { UsageNumbers } from "../../helpers/scenario-scripts.js";

// biome-ignore lint/suspicious/noExplicitAny: recorded wire JSON is read field by field.
type Json = any;

export type CanonicalFinish = "stop" | "length" | "tool-calls" | "content-filter" | "refusal" | "pause";

export interface RecordedExpectation {
  text: string;
  /** Function tool calls (server tools excluded), arguments parsed. */
  toolCalls: Array<{ name: string; input: unknown }>;
  finish?: CanonicalFinish;
  usage?: UsageNumbers & { cacheWrite: number };
  /** The recording fails after HTTP 200 (in-band error); `text` is what came before. */
  inBandError?: boolean;
  /** The recording is an HTTP error body with this status. */
  httpStatus?: number;
  /** The upstream's error details (HTTP error body, or in-band error frame). */
  upstreamError?: { type?: string; code?: string };
}

export interface Recording {
  /** Path under test/fixtures/recorded/, plus `#n` for the n-th response of a multi-response file. */
  name: string;
  kind: ProviderKind;
  stream: boolean;
  reply: UpstreamReply;
  expected: RecordedExpectation;
}

const FOLDERS: Array<{ folder: string; kind: ProviderKind }> = [
  { folder: "openai/chat", kind: "openai-chat" },
  { folder: "openai/responses", kind: "openai-responses" },
  { folder: "anthropic/messages", kind: "anthropic" },
  { folder: "google/gemini", kind: "google" },
];

/** HTTP status of error bodies the manifest has no `http` entry for. */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  insufficient_quota: 429,
  invalid_request_error: 400,
  RESOURCE_EXHAUSTED: 429,
};

export function loadRecordings(): Recording[] {
  const statuses = readManifestStatuses();
  const recordings: Recording[] = [];
  for (const { folder, kind } of FOLDERS) {
    for (const file of readdirSync(join(RECORDED_DIR, folder)).sort()) {
      const path = `${folder}/${file}`;
      const text = readFileSync(join(RECORDED_DIR, folder, file), "utf8");
      if (file.endsWith(".sse")) {
        recordings.push({ name: path, kind, stream: true, ...fromSse(kind, text) });
      } else if (file.endsWith(".chunks.txt")) {
        recordings.push(...fromChunks(kind, path, text));
      } else if (file.endsWith(".json") && !file.endsWith(".request.json")) {
        recordings.push(...fromBody(kind, path, text, statuses.get(path)));
      }
    }
  }
  return recordings;
}

function readManifestStatuses(): Map<string, number> {
  const manifest = JSON.parse(readFileSync(join(RECORDED_DIR, "manifest.json"), "utf8")) as Json;
  const statuses = new Map<string, number>();
  for (const entry of manifest.files ?? []) {
    if (typeof entry.http?.status === "number") statuses.set(entry.file, entry.http.status);
  }
  return statuses;
}

function sseRaw(body: string): UpstreamReply {
  return { kind: "raw", body };
}

/** Served SSE bodies: the recording's own bytes. */
function fromSse(kind: ProviderKind, body: string): Pick<Recording, "reply" | "expected"> {
  return { reply: sseRaw(body), expected: expectFromEvents(kind, parseSseData(body)) };
}

function fromChunks(kind: ProviderKind, path: string, text: string): Recording[] {
  const payloads = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const events = payloads.map((line) => JSON.parse(line) as Json);
  const frame = (lines: string[], parsed: Json[]) => {
    switch (kind) {
      case "openai-chat":
      case "openai-compatible":
        return `${lines.map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`;
      case "google":
        return lines.map((line) => `data: ${line}\r\n\r\n`).join("");
      default:
        return lines.map((line, index) => `event: ${parsed[index].type}\ndata: ${line}\n\n`).join("");
    }
  };
  if (kind !== "openai-responses") {
    return [
      {
        name: path,
        kind,
        stream: true,
        reply: sseRaw(frame(payloads, events)),
        expected: expectFromEvents(kind, events),
      },
    ];
  }
  // Several responses back to back: one recording per `response.created`.
  const starts = events.flatMap((event, index) => (event.type === "response.created" ? [index] : []));
  return starts.map((start, position) => {
    const end = starts[position + 1] ?? events.length;
    const slice = { lines: payloads.slice(start, end), events: events.slice(start, end) };
    return {
      name: starts.length > 1 ? `${path}#${position + 1}` : path,
      kind,
      stream: true,
      reply: sseRaw(frame(slice.lines, slice.events)),
      expected: expectFromEvents(kind, slice.events),
    };
  });
}

function fromBody(kind: ProviderKind, path: string, text: string, status: number | undefined): Recording[] {
  const body = JSON.parse(text) as Json;
  const isError = (body.error !== null && body.error !== undefined) || body.type === "error";
  if (!isError) {
    return [
      {
        name: path,
        kind,
        stream: false,
        reply: { kind: "raw", body: text, headers: { "content-type": "application/json" } },
        expected: expectFromBody(kind, body),
      },
    ];
  }
  const httpStatus =
    status ?? STATUS_BY_ERROR_TYPE[body.error?.type ?? body.error?.status ?? ""] ?? body.error?.code ?? 400;
  // An error before any output answers a streaming request the same way: both modes.
  return [false, true].map((stream) => ({
    name: path,
    kind,
    stream,
    reply: { kind: "error", status: httpStatus, body },
    expected: { text: "", toolCalls: [], httpStatus, upstreamError: readErrorDetails(body) },
  }));
}

function readErrorDetails(frame: Json): { type?: string; code?: string } {
  const inner = typeof frame.error === "object" && frame.error !== null ? frame.error : frame;
  return {
    ...(typeof inner.type === "string" ? { type: inner.type } : {}),
    ...(typeof inner.code === "string" ? { code: inner.code } : {}),
  };
}

/** `data:` payloads of an SSE body, JSON-parsed (`[DONE]` and pings dropped). */
function parseSseData(body: string): Json[] {
  const events: Json[] = [];
  for (const block of body.replaceAll("\r\n", "\n").split("\n\n")) {
    const data = block
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .join("\n");
    if (data === "" || data === "[DONE]") continue;
    events.push(JSON.parse(data));
  }
  return events;
}

// ---------------------------------------------------------------------------------------------
// Expectations, per provider wire

function expectFromEvents(kind: ProviderKind, events: Json[]): RecordedExpectation {
  switch (kind) {
    case "openai-chat":
    case "openai-compatible":
      return expectFromChatChunks(events);
    case "openai-responses":
      return expectFromResponseEvents(events);
    case "anthropic":
      return expectFromAnthropicEvents(events);
    case "google":
      return expectFromGeminiChunks(events);
  }
}

function expectFromBody(kind: ProviderKind, body: Json): RecordedExpectation {
  switch (kind) {
    case "openai-chat":
    case "openai-compatible":
      return expectFromChatCompletion(body);
    case "openai-responses":
      return expectFromResponse(body);
    case "anthropic":
      return expectFromAnthropicMessage(body);
    case "google":
      return expectFromGeminiChunks([body]);
  }
}

function chatUsage(usage: Json): RecordedExpectation["usage"] {
  if (!usage) return undefined;
  return {
    input: usage.prompt_tokens ?? 0,
    output: usage.completion_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

function chatFinish(reason: string | null | undefined, hasTools: boolean, refusal: boolean): CanonicalFinish {
  if (hasTools || reason === "tool_calls") return "tool-calls";
  if (reason === "length") return "length";
  if (reason === "content_filter") return "content-filter";
  return refusal ? "refusal" : "stop";
}

function expectFromChatChunks(chunks: Json[]): RecordedExpectation {
  let text = "";
  let refusal = "";
  let reason: string | undefined;
  let usage: Json;
  const calls: Array<{ name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    if (chunk.error)
      return { text, toolCalls: [], inBandError: true, upstreamError: readErrorDetails(chunk) };
    if (chunk.usage) usage = chunk.usage;
    // The gateway serves one choice: choice 0 (recordings with n > 1 interleave the others).
    const choice = (chunk.choices ?? []).find((candidate: Json) => candidate.index === 0);
    if (!choice) continue;
    text += choice.delta?.content ?? "";
    refusal += choice.delta?.refusal ?? "";
    for (const call of choice.delta?.tool_calls ?? []) {
      calls[call.index] ??= { name: "", arguments: "" };
      if (call.function?.name) calls[call.index].name = call.function.name;
      calls[call.index].arguments += call.function?.arguments ?? "";
    }
    if (choice.finish_reason) reason = choice.finish_reason;
  }
  const toolCalls = calls.map((call) => ({ name: call.name, input: JSON.parse(call.arguments || "{}") }));
  return {
    text: text + refusal,
    toolCalls,
    finish: chatFinish(reason, toolCalls.length > 0, refusal !== ""),
    usage: chatUsage(usage),
  };
}

function expectFromChatCompletion(body: Json): RecordedExpectation {
  const choice = body.choices[0];
  const toolCalls = (choice.message.tool_calls ?? []).map((call: Json) => ({
    name: call.function.name,
    input: JSON.parse(call.function.arguments || "{}"),
  }));
  const refusal = typeof choice.message.refusal === "string" && choice.message.refusal !== "";
  return {
    text: refusal ? choice.message.refusal : (choice.message.content ?? ""),
    toolCalls,
    finish: chatFinish(choice.finish_reason, toolCalls.length > 0, refusal),
    usage: chatUsage(body.usage),
  };
}

function expectFromResponseEvents(events: Json[]): RecordedExpectation {
  const failure = events.find((event) => event.type === "error" || event.type === "response.failed");
  if (failure !== undefined) {
    let text = "";
    for (const event of events) if (event.type === "response.output_text.delta") text += event.delta;
    return { text, toolCalls: [], inBandError: true, upstreamError: readErrorDetails(failure) };
  }
  const terminal = events.find(
    (event) => event.type === "response.completed" || event.type === "response.incomplete",
  );
  // Items as their `output_item.done` events carry them (the terminal event has the same ones).
  const done = new Map<string, Json>();
  for (const event of events)
    if (event.type === "response.output_item.done") done.set(event.item.id, event.item);
  const output = (terminal.response.output as Json[]).map((item) => done.get(item.id) ?? item);
  return expectFromResponse({ ...terminal.response, output });
}

function expectFromResponse(response: Json): RecordedExpectation {
  let text = "";
  let refusal = false;
  const toolCalls: RecordedExpectation["toolCalls"] = [];
  for (const item of response.output ?? []) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text") text += part.text;
        if (part.type === "refusal") {
          text += part.refusal;
          refusal = true;
        }
      }
    } else if (item.type === "function_call") {
      toolCalls.push({ name: item.name, input: JSON.parse(item.arguments || "{}") });
    }
  }
  const reason = response.incomplete_details?.reason;
  const finish: CanonicalFinish =
    response.status === "incomplete"
      ? reason === "content_filter"
        ? "content-filter"
        : "length"
      : toolCalls.length > 0
        ? "tool-calls"
        : refusal
          ? "refusal"
          : "stop";
  const usage = response.usage;
  return {
    text,
    toolCalls,
    finish,
    usage: usage
      ? {
          input: usage.input_tokens ?? 0,
          output: usage.output_tokens ?? 0,
          cached: usage.input_tokens_details?.cached_tokens ?? 0,
          cacheWrite: usage.input_tokens_details?.cache_write_tokens ?? 0,
          reasoning: usage.output_tokens_details?.reasoning_tokens ?? 0,
        }
      : undefined,
  };
}

function anthropicUsage(usage: Json): RecordedExpectation["usage"] {
  if (!usage) return undefined;
  const cached = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return {
    input: (usage.input_tokens ?? 0) + cached + cacheWrite,
    output: usage.output_tokens ?? 0,
    cached,
    cacheWrite,
    reasoning: usage.output_tokens_details?.thinking_tokens ?? 0,
  };
}

const ANTHROPIC_FINISH: Record<string, CanonicalFinish> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool-calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "refusal",
  pause_turn: "pause",
};

function expectFromAnthropicMessage(message: Json): RecordedExpectation {
  let text = "";
  const toolCalls: RecordedExpectation["toolCalls"] = [];
  for (const block of message.content ?? []) {
    if (block.type === "text") text += block.text;
    if (block.type === "tool_use") toolCalls.push({ name: block.name, input: block.input });
  }
  return {
    text,
    toolCalls,
    finish: ANTHROPIC_FINISH[message.stop_reason],
    usage: anthropicUsage(message.usage),
  };
}

function expectFromAnthropicEvents(events: Json[]): RecordedExpectation {
  const blocks = new Map<number, { type: string; name?: string; text: string; json: string }>();
  let usage: Json = {};
  let stopReason: string | undefined;
  let text = "";
  for (const event of events) {
    switch (event.type) {
      case "error":
        return { text, toolCalls: [], inBandError: true, upstreamError: readErrorDetails(event) };
      case "message_start":
        usage = { ...event.message.usage };
        break;
      case "content_block_start":
        blocks.set(event.index, {
          type: event.content_block.type,
          name: event.content_block.name,
          text: event.content_block.text ?? "",
          json: "",
        });
        text += event.content_block.text ?? "";
        break;
      case "content_block_delta": {
        const block = blocks.get(event.index)!;
        if (event.delta.type === "text_delta") {
          block.text += event.delta.text;
          text += event.delta.text;
        }
        if (event.delta.type === "input_json_delta") block.json += event.delta.partial_json;
        break;
      }
      case "message_delta":
        stopReason = event.delta.stop_reason ?? stopReason;
        // Counters are cumulative: a present value replaces the earlier one.
        for (const [key, value] of Object.entries(event.usage ?? {})) if (value !== null) usage[key] = value;
        break;
    }
  }
  const toolCalls = [...blocks.values()]
    .filter((block) => block.type === "tool_use")
    .map((block) => ({ name: block.name!, input: JSON.parse(block.json || "{}") }));
  return {
    text,
    toolCalls,
    finish: stopReason === undefined ? undefined : ANTHROPIC_FINISH[stopReason],
    usage: anthropicUsage(usage),
  };
}

const GEMINI_FILTERS = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
]);

function expectFromGeminiChunks(chunks: Json[]): RecordedExpectation {
  let text = "";
  const toolCalls: RecordedExpectation["toolCalls"] = [];
  let usage: Json;
  let reason: string | undefined;
  for (const chunk of chunks) {
    if (chunk.error) return { text, toolCalls, inBandError: true, upstreamError: readErrorDetails(chunk) };
    if (chunk.usageMetadata) usage = chunk.usageMetadata;
    const candidate = chunk.candidates?.[0];
    if (candidate?.finishReason) reason = candidate.finishReason;
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.text === "string" && part.thought !== true) text += part.text;
      if (part.functionCall)
        toolCalls.push({ name: part.functionCall.name, input: part.functionCall.args ?? {} });
    }
  }
  const finish: CanonicalFinish | undefined =
    reason === undefined
      ? undefined
      : reason === "MAX_TOKENS"
        ? "length"
        : GEMINI_FILTERS.has(reason)
          ? "content-filter"
          : toolCalls.length > 0
            ? "tool-calls"
            : "stop";
  const thoughts = usage?.thoughtsTokenCount ?? 0;
  return {
    text,
    toolCalls,
    finish,
    usage: usage
      ? {
          input: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
          output: (usage.candidatesTokenCount ?? 0) + thoughts,
          cached: usage.cachedContentTokenCount ?? 0,
          cacheWrite: 0,
          reasoning: thoughts,
        }
      : undefined,
  };
}
