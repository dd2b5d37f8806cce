/**
 * A scriptable loopback server that speaks the Gemini API wire format, for
 * tests of anything that calls a `google` upstream (adapter tests, end-to-end gateway tests).
 *
 * Usage:
 * ```ts
 * const upstream = await startFakeGoogleUpstream();
 * // provider config: { kind: "google", baseUrl: upstream.baseUrl, ... }  (http://127.0.0.1:<port>/v1beta)
 * upstream.enqueue(fakeGoogleReply.sse(buildGeminiTextChunks(["Hel", "lo"])));   // next request streams
 * upstream.enqueue(fakeGoogleReply.json(buildGenerateContentResponse({ text: "Hi" })));
 * upstream.enqueue(fakeGoogleReply.error(429, buildGeminiError(429, "RESOURCE_EXHAUSTED", "slow down")));
 * ... exercise the code ...
 * assert.equal(upstream.requests[0].path, "/v1beta/models/gemini-2.5-flash:generateContent");
 * await upstream.close();
 * ```
 *
 * It is the OpenAI fake's server (queue, recording, hang, socket close) with Gemini framing on top.
 * Replies are consumed in order, one per request, whatever the path; when the queue is empty the
 * `handler` (if set) decides, else a default reply answers with {@link DEFAULT_GEMINI_TEXT} —
 * streamed when the path is `…:streamGenerateContent`. Every request is recorded (method, path with
 * query, headers, body) before it is answered. Only 127.0.0.1 is bound; the OS picks the port.
 *
 * Reply kinds:
 * - `json`: a JSON body (any status; default 200).
 * - `sse`: Gemini's `alt=sse` stream scripted as steps: `{ data }` writes one `data: {json}\r\n\r\n`
 *   frame (CRLF, as the real API; objects are JSON-encoded, strings written verbatim), `{ raw }`
 *   writes bytes as is, `{ delayMs }` waits, `{ closeSocket: true }` destroys the connection,
 *   `{ hang: true }` stops writing without ending. There is no terminator: the response just ends.
 * - `raw`: a verbatim body (e.g. a recorded `.sse` file), optionally in `chunkSize`-byte pieces.
 * - `error`: an HTTP error with a JSON (or text) body and headers; see {@link buildGeminiError}.
 * - `hang`: read the request and never answer (first-byte deadlines).
 * - `closeSocket`: destroy the connection without answering (resets).
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

export type RecordedGoogleRequest = RecordedRequest;
export type FakeGoogleReply = FakeReply;
export type FakeGoogleHandler = FakeHandler;
export type GoogleSseStep = SseStep;
/** Same surface as the OpenAI fake, but `baseUrl` is `http://127.0.0.1:<port>/v1beta`. */
export type FakeGoogleUpstream = FakeOpenAiUpstream;

interface ReplyInit {
  status?: number;
  headers?: Record<string, string>;
}

export const DEFAULT_GEMINI_TEXT = "Hello from the fake Gemini upstream.";
export const DEFAULT_GEMINI_MODEL_VERSION = "gemini-fake-2.5";
export const DEFAULT_GEMINI_RESPONSE_ID = "ZmFrZUdlbWluaVJlc3BvbnNl";
/** prompt 10 + candidates 5 + thoughts 0 = total 15. */
export const DEFAULT_GEMINI_USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

/** The real API: JSON with a charset, event streams without one. */
const JSON_HEADERS = { "content-type": "application/json; charset=UTF-8" };
const SSE_HEADERS = { "content-type": "text/event-stream" };

/** Builders for {@link FakeGoogleReply} values. */
export const fakeGoogleReply = {
  json: (body: unknown, init: ReplyInit = {}): FakeGoogleReply =>
    fakeReply.json(body, { ...init, headers: { ...JSON_HEADERS, ...init.headers } }),
  /** `chunks` are response chunks (each becomes one CRLF `data:` frame) or steps; no terminator. */
  sse: (chunks: Array<GoogleSseStep | Record<string, unknown>>, init: ReplyInit = {}): FakeGoogleReply => ({
    kind: "sse",
    steps: chunks.map(toCrlfStep),
    done: false,
    status: init.status,
    headers: { ...SSE_HEADERS, ...init.headers },
  }),
  raw: (
    body: string | Buffer,
    init: ReplyInit & { chunkSize?: number; chunkDelayMs?: number } = {},
  ): FakeGoogleReply => fakeReply.raw(body, { ...init, headers: { ...SSE_HEADERS, ...init.headers } }),
  error: (status: number, body: unknown, headers: Record<string, string> = {}): FakeGoogleReply =>
    fakeReply.error(status, body, { ...JSON_HEADERS, ...headers }),
  hang: (): FakeGoogleReply => fakeReply.hang(),
  closeSocket: (): FakeGoogleReply => fakeReply.closeSocket(),
};

export async function startFakeGoogleUpstream(
  options: { handler?: FakeGoogleHandler } = {},
): Promise<FakeGoogleUpstream> {
  const upstream = await startFakeOpenAiUpstream({ handler: options.handler ?? createDefaultReply });
  return {
    ...upstream,
    baseUrl: `${upstream.origin}/v1beta`,
    setHandler: (handler) => upstream.setHandler(handler ?? createDefaultReply),
  };
}

export interface GeminiChunkOptions {
  finishReason?: string;
  finishMessage?: string;
  /** `usageMetadata`; `null` leaves it out. Default {@link DEFAULT_GEMINI_USAGE}. */
  usage?: Record<string, unknown> | null;
  modelVersion?: string;
  responseId?: string;
}

/**
 * One `GenerateContentResponse` with the given parts for candidate 0, in the API's key order.
 * Also the complete non-streamed body (a non-streamed response is one chunk with everything).
 */
export function buildGeminiChunk(parts: Array<Record<string, unknown>>, options: GeminiChunkOptions = {}) {
  return {
    candidates: [
      {
        content: { parts, role: "model" },
        ...(options.finishReason === undefined ? {} : { finishReason: options.finishReason }),
        ...(options.finishMessage === undefined ? {} : { finishMessage: options.finishMessage }),
        index: 0,
      },
    ],
    ...(options.usage === null ? {} : { usageMetadata: options.usage ?? DEFAULT_GEMINI_USAGE }),
    modelVersion: options.modelVersion ?? DEFAULT_GEMINI_MODEL_VERSION,
    responseId: options.responseId ?? DEFAULT_GEMINI_RESPONSE_ID,
  };
}

/** A complete non-streamed body: `text` (default {@link DEFAULT_GEMINI_TEXT}) or explicit `parts`. */
export function buildGenerateContentResponse(
  options: GeminiChunkOptions & { text?: string; parts?: Array<Record<string, unknown>> } = {},
) {
  const parts = options.parts ?? [{ text: options.text ?? DEFAULT_GEMINI_TEXT }];
  return buildGeminiChunk(parts, { finishReason: "STOP", ...options });
}

/** A text stream as Gemini sends it: one chunk per piece, each with usage, finishReason on the last. */
export function buildGeminiTextChunks(pieces: string[], options: GeminiChunkOptions = {}) {
  return pieces.map((piece, index) =>
    buildGeminiChunk([{ text: piece }], {
      ...options,
      finishReason: index === pieces.length - 1 ? (options.finishReason ?? "STOP") : undefined,
    }),
  );
}

/** The google.rpc error envelope: `{error: {code, message, status, details}}`. */
export function buildGeminiError(code: number, status: string, message: string, details: unknown[] = []) {
  return { error: { code, message, status, ...(details.length > 0 ? { details } : {}) } };
}

/** Gemini frames with CRLF: a data step becomes the exact bytes of one frame. */
function toCrlfStep(item: GoogleSseStep | Record<string, unknown>): SseStep {
  const keys = Object.keys(item);
  const isStep =
    keys.length === 1 && ["data", "raw", "delayMs", "closeSocket", "hang"].includes(keys[0] ?? "");
  const step = (isStep ? item : { data: item }) as SseStep;
  if (!("data" in step)) return step;
  return { raw: `data: ${typeof step.data === "string" ? step.data : JSON.stringify(step.data)}\r\n\r\n` };
}

function createDefaultReply(request: RecordedGoogleRequest): FakeGoogleReply {
  if (request.path.includes(":streamGenerateContent")) {
    return fakeGoogleReply.sse(buildGeminiTextChunks([DEFAULT_GEMINI_TEXT]));
  }
  return fakeGoogleReply.json(buildGenerateContentResponse());
}
