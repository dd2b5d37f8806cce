/**
 * A scriptable loopback server that speaks the OpenAI Responses wire format,
 * for tests of anything that calls an `openai-responses` upstream. It is the server of
 * `fake-openai-upstream.ts` (same recording of requests, queue, hang, socket close, HTTP errors)
 * with Responses replies: JSON `response` objects, and event streams framed as OpenAI frames them
 * (`event: <type>` + `data: <json>`, `sequence_number` from 0 without gaps, no `[DONE]`).
 *
 * Usage:
 * ```ts
 * const upstream = await startFakeOpenAiResponsesUpstream();   // baseUrl http://127.0.0.1:<port>/v1
 * const spec = { items: [{ type: "message", text: ["Hel", "lo"] }] };
 * upstream.enqueue(responsesReply.sse(buildResponseEvents(spec)));    // a streamed answer
 * upstream.enqueue(responsesReply.json(buildResponse(spec)));         // a JSON answer
 * upstream.enqueue(responsesReply.sse([...buildResponseEvents(spec).slice(0, 4), ...buildFailureEvents(
 *   { code: "server_error", message: "boom" })]));                   // `error` + `response.failed` mid-stream
 * upstream.enqueue(responsesReply.sse([...events, { hang: true }]));  // steps of the chat fake mix in
 * upstream.enqueue(fakeReply.error(429, { error: {...} }), fakeReply.hang(), fakeReply.closeSocket());
 * ```
 * Without queued replies the server answers with a text response ({@link DEFAULT_RESPONSE_TEXT}),
 * streamed when the request has `stream: true`.
 */
import {
  type FakeOpenAiUpstream,
  type FakeReply,
  fakeReply,
  type RecordedRequest,
  type SseStep,
  startFakeOpenAiUpstream,
} from "./fake-openai-upstream.js";

export { type FakeOpenAiUpstream, fakeReply, type RecordedRequest };

export const DEFAULT_RESPONSE_TEXT = "Hello from the fake Responses upstream.";
export const DEFAULT_RESPONSE_ID = "resp_0fake000000000000000000000000000000000000000001";
export const DEFAULT_RESPONSE_MODEL = "gpt-fake-2025-08-07";

export type ResponseItemSpec =
  | {
      type: "message";
      /** The text, or its deltas. */
      text: string | string[];
      /** Sent as a `refusal` content part instead of `output_text`. */
      refusal?: boolean;
      id?: string;
    }
  | {
      type: "function_call";
      name: string;
      /** The arguments JSON, or its deltas. */
      arguments: string | string[];
      callId?: string;
      id?: string;
    }
  | {
      type: "reasoning";
      /** Summary parts, each as text or deltas; none when the request asked for no summary. */
      summary?: Array<string | string[]>;
      /** On `output_item.done` and in the final output. */
      encryptedContent?: string;
      /** On `output_item.added`: OpenAI sends a different value there than on done. */
      encryptedContentAdded?: string;
      id?: string;
    };

export interface ResponseSpec {
  id?: string;
  model?: string;
  items?: ResponseItemSpec[];
  status?: "completed" | "incomplete";
  incompleteReason?: "max_output_tokens" | "content_filter";
  /** `null` leaves usage out. */
  usage?: Record<string, unknown> | null;
}

export type ResponseEvent = Record<string, unknown> & { type: string };

export const DEFAULT_USAGE = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 19,
};

/** The complete `response` object (what a non-streamed call returns, and `response.completed` carries). */
export function buildResponse(spec: ResponseSpec = {}): Record<string, unknown> {
  const items = spec.items ?? [{ type: "message", text: DEFAULT_RESPONSE_TEXT }];
  const status = spec.status ?? "completed";
  return {
    ...responseEnvelope(spec),
    status,
    incomplete_details:
      status === "incomplete" ? { reason: spec.incompleteReason ?? "max_output_tokens" } : null,
    output: items.map((item, index) => buildDoneItem(item, index, spec)),
    usage: spec.usage === null ? null : (spec.usage ?? DEFAULT_USAGE),
  };
}

/** Every event of a streamed response, numbered from 0, one item at a time as OpenAI sends them. */
export function buildResponseEvents(spec: ResponseSpec = {}): ResponseEvent[] {
  const items = spec.items ?? [{ type: "message", text: DEFAULT_RESPONSE_TEXT }];
  const inProgress = { ...responseEnvelope(spec), status: "in_progress", output: [], usage: null };
  const events: ResponseEvent[] = [
    { type: "response.created", response: inProgress },
    { type: "response.in_progress", response: inProgress },
  ];
  for (const [outputIndex, item] of items.entries()) events.push(...buildItemEvents(item, outputIndex, spec));
  const final = buildResponse(spec);
  events.push({
    type: final.status === "incomplete" ? "response.incomplete" : "response.completed",
    response: final,
  });
  return numberEvents(events);
}

/** The live API's mid-stream failure: an `error` event (nested error) then `response.failed`. */
export function buildFailureEvents(
  error: { code: string; message: string; type?: string },
  spec: ResponseSpec = {},
): ResponseEvent[] {
  return [
    {
      type: "error",
      error: { type: error.type ?? error.code, code: error.code, message: error.message, param: null },
    },
    {
      type: "response.failed",
      response: {
        ...responseEnvelope(spec),
        status: "failed",
        error: { code: error.code, message: error.message },
        output: [],
        usage: null,
      },
    },
  ];
}

/** Renumbers `sequence_number` 0, 1, 2, … in array order (after tests splice or reorder events). */
export function numberEvents(events: ResponseEvent[]): ResponseEvent[] {
  return events.map((event, index) => {
    const { type, sequence_number: _ignored, ...rest } = event;
    return { type, sequence_number: index, ...rest };
  });
}

/** The SSE body of `events`: `event: <type>\ndata: <json>\n\n` per event. */
export function encodeResponseEvents(events: ResponseEvent[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
}

/** Builders for Responses replies of the fake server (errors, hangs and resets: see `fakeReply`). */
export const responsesReply = {
  json: (body: Record<string, unknown> = buildResponse(), status = 200): FakeReply =>
    fakeReply.json(body, { status }),
  /** Events framed as SSE; steps of the chat fake (`delayMs`, `hang`, `closeSocket`) may be mixed in. */
  sse: (events: Array<ResponseEvent | SseStep>, headers: Record<string, string> = {}): FakeReply => ({
    kind: "sse",
    steps: events.map((event) =>
      isResponseEvent(event) ? { raw: encodeResponseEvents([event]) } : (event as SseStep),
    ),
    done: false,
    headers,
  }),
};

/** The fake server of `fake-openai-upstream.ts`, answering Responses-shaped by default. */
export function startFakeOpenAiResponsesUpstream(): Promise<FakeOpenAiUpstream> {
  return startFakeOpenAiUpstream({
    handler: (request) =>
      request.body?.stream === true
        ? responsesReply.sse(buildResponseEvents())
        : responsesReply.json(buildResponse()),
  });
}

function responseEnvelope(spec: ResponseSpec): Record<string, unknown> {
  return {
    id: spec.id ?? DEFAULT_RESPONSE_ID,
    object: "response",
    created_at: 1_758_034_836,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: spec.model ?? DEFAULT_RESPONSE_MODEL,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    user: null,
    metadata: {},
  };
}

function itemId(item: ResponseItemSpec, index: number, spec: ResponseSpec): string {
  if (item.id !== undefined) return item.id;
  const prefix = item.type === "message" ? "msg" : item.type === "function_call" ? "fc" : "rs";
  // Item ids share their hex with the response id, as OpenAI's do.
  const suffix = (spec.id ?? DEFAULT_RESPONSE_ID).slice(5, -2);
  return `${prefix}_${suffix}${String(index).padStart(2, "0")}`;
}

function joined(value: string | string[]): string {
  return Array.isArray(value) ? value.join("") : value;
}

function pieces(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

function messagePart(item: Extract<ResponseItemSpec, { type: "message" }>, text: string) {
  return item.refusal
    ? { type: "refusal", refusal: text }
    : { type: "output_text", annotations: [], logprobs: [], text };
}

function buildDoneItem(item: ResponseItemSpec, index: number, spec: ResponseSpec): Record<string, unknown> {
  const id = itemId(item, index, spec);
  switch (item.type) {
    case "message":
      return {
        id,
        type: "message",
        status: "completed",
        content: [messagePart(item, joined(item.text))],
        role: "assistant",
      };
    case "function_call":
      return {
        id,
        type: "function_call",
        status: "completed",
        arguments: joined(item.arguments),
        call_id: item.callId ?? `call_fake${String(index).padStart(19, "0")}`,
        name: item.name,
      };
    case "reasoning":
      return {
        id,
        type: "reasoning",
        ...(item.encryptedContent === undefined ? {} : { encrypted_content: item.encryptedContent }),
        summary: (item.summary ?? []).map((part) => ({ type: "summary_text", text: joined(part) })),
      };
  }
}

function buildItemEvents(item: ResponseItemSpec, outputIndex: number, spec: ResponseSpec): ResponseEvent[] {
  const done = buildDoneItem(item, outputIndex, spec);
  const itemId = done.id as string;
  const scope = { item_id: itemId, output_index: outputIndex };
  const events: ResponseEvent[] = [];
  switch (item.type) {
    case "message": {
      const text = joined(item.text);
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...done, status: "in_progress", content: [] },
      });
      events.push({
        type: "response.content_part.added",
        ...scope,
        content_index: 0,
        part: messagePart(item, ""),
      });
      for (const delta of pieces(item.text)) {
        events.push(
          item.refusal
            ? { type: "response.refusal.delta", ...scope, content_index: 0, delta }
            : { type: "response.output_text.delta", ...scope, content_index: 0, delta, logprobs: [] },
        );
      }
      events.push(
        item.refusal
          ? { type: "response.refusal.done", ...scope, content_index: 0, refusal: text }
          : { type: "response.output_text.done", ...scope, content_index: 0, text, logprobs: [] },
      );
      events.push({
        type: "response.content_part.done",
        ...scope,
        content_index: 0,
        part: messagePart(item, text),
      });
      break;
    }
    case "function_call":
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...done, status: "in_progress", arguments: "" },
      });
      for (const delta of pieces(item.arguments)) {
        events.push({ type: "response.function_call_arguments.delta", ...scope, delta });
      }
      events.push({ type: "response.function_call_arguments.done", ...scope, arguments: done.arguments });
      break;
    case "reasoning": {
      const added = item.encryptedContentAdded ?? item.encryptedContent;
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...done, summary: [], ...(added === undefined ? {} : { encrypted_content: added }) },
      });
      (item.summary ?? []).forEach((part, summaryIndex) => {
        const text = joined(part);
        const partScope = { ...scope, summary_index: summaryIndex };
        events.push({
          type: "response.reasoning_summary_part.added",
          ...partScope,
          part: { type: "summary_text", text: "" },
        });
        for (const delta of pieces(part)) {
          events.push({ type: "response.reasoning_summary_text.delta", ...partScope, delta });
        }
        events.push({ type: "response.reasoning_summary_text.done", ...partScope, text });
        events.push({
          type: "response.reasoning_summary_part.done",
          ...partScope,
          part: { type: "summary_text", text },
        });
      });
      break;
    }
  }
  events.push({ type: "response.output_item.done", output_index: outputIndex, item: done });
  return events;
}

function isResponseEvent(value: ResponseEvent | SseStep): value is ResponseEvent {
  return typeof (value as { type?: unknown }).type === "string";
}
