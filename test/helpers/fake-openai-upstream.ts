/**
 * A scriptable loopback server that speaks the OpenAI Chat Completions wire format, for tests of
 * anything that calls an `openai-compatible` upstream (adapter tests, end-to-end gateway tests).
 *
 * Usage:
 * ```ts
 * const upstream = await startFakeOpenAiUpstream();
 * // provider config: { baseUrl: upstream.baseUrl, ... }   (http://127.0.0.1:<port>/v1)
 * upstream.enqueue(fakeReply.sse(buildTextChunks(["Hel", "lo"])));     // next request streams
 * upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Hi" })));
 * upstream.enqueue(fakeReply.error(429, { error: { message: "slow down" } }, { "retry-after": "7" }));
 * ... exercise the code ...
 * assert.equal(upstream.requests[0].body.model, "gpt-4o-mini");
 * await upstream.close();
 * ```
 *
 * Replies are consumed in order, one per request, whatever the path; when the queue is empty the
 * `handler` (if set) decides, else a default reply answers with the text {@link DEFAULT_REPLY_TEXT}
 * (streamed when the request body has `stream: true`). Every request is recorded before it is
 * answered. Only 127.0.0.1 is bound; the port is chosen by the OS.
 *
 * Reply kinds:
 * - `json`: a JSON body (any status; default 200).
 * - `sse`: an event stream scripted as steps: `{ data }` writes one `data:` frame (objects are
 *   JSON-encoded, strings are written verbatim), `{ raw }` writes bytes as is, `{ delayMs }` waits,
 *   `{ closeSocket: true }` destroys the connection mid-stream, `{ hang: true }` stops writing
 *   without ending. `data: [DONE]` is appended unless `done: false`.
 * - `raw`: a verbatim body (e.g. a recorded `.sse` file), optionally written in `chunkSize`-byte
 *   pieces to exercise chunk boundaries.
 * - `error`: an HTTP error with a JSON (or text) body and headers.
 * - `hang`: read the request and never answer (first-byte deadlines).
 * - `closeSocket`: destroy the connection without answering (resets).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lowercased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; `undefined` when empty or not JSON (see `rawBody`). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields from it.
  body: any;
  rawBody: string;
  /** The client's port: equal ports on two requests mean a reused keep-alive connection. */
  remotePort: number | undefined;
  /** Resolves when the response is over: finished, or its connection closed (e.g. the client aborted). */
  closed: Promise<void>;
  /** Set when the connection closed before the response was fully written (client went away). */
  closedBeforeEnd: boolean;
}

export type SseStep =
  | { data: unknown }
  | { raw: string }
  | { delayMs: number }
  | { closeSocket: true }
  | { hang: true };

interface ReplyInit {
  status?: number;
  headers?: Record<string, string>;
}

export type FakeReply =
  | ({ kind: "json"; body: unknown } & ReplyInit)
  | ({ kind: "sse"; steps: SseStep[]; done?: boolean } & ReplyInit)
  | ({ kind: "raw"; body: string | Buffer; chunkSize?: number; chunkDelayMs?: number } & ReplyInit)
  | { kind: "error"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "hang" }
  | { kind: "closeSocket" };

export type FakeHandler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAiUpstream {
  /** `http://127.0.0.1:<port>/v1`: use as a provider's base URL. */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Queues replies for the next requests, in order. */
  enqueue(...replies: FakeReply[]): void;
  /** Sets (or clears) the fallback used when the queue is empty. */
  setHandler(handler: FakeHandler | undefined): void;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Stops listening and destroys open connections (hanging replies included). */
  close(): Promise<void>;
}

export const DEFAULT_REPLY_TEXT = "Hello from the fake upstream.";

/** Builders for {@link FakeReply} values. */
export const fakeReply = {
  json: (body: unknown, init: ReplyInit = {}): FakeReply => ({ kind: "json", body, ...init }),
  /** `chunks` are chunk objects (or steps); a `data: [DONE]` frame is appended unless `done: false`. */
  sse: (
    chunks: Array<SseStep | Record<string, unknown>>,
    init: ReplyInit & { done?: boolean } = {},
  ): FakeReply => ({
    kind: "sse",
    steps: chunks.map(toStep),
    ...init,
  }),
  raw: (
    body: string | Buffer,
    init: ReplyInit & { chunkSize?: number; chunkDelayMs?: number } = {},
  ): FakeReply => ({
    kind: "raw",
    body,
    ...init,
  }),
  error: (status: number, body: unknown, headers: Record<string, string> = {}): FakeReply => ({
    kind: "error",
    status,
    body,
    headers,
  }),
  hang: (): FakeReply => ({ kind: "hang" }),
  closeSocket: (): FakeReply => ({ kind: "closeSocket" }),
};

export async function startFakeOpenAiUpstream(
  options: { handler?: FakeHandler } = {},
): Promise<FakeOpenAiUpstream> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: Array<() => void> = [];
  let handler = options.handler;

  const server = createServer((request, response) => {
    void serve(request, response);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let recorded: RecordedRequest | undefined;
    const closed = new Promise<void>((resolve) =>
      response.on("close", () => {
        if (recorded !== undefined) recorded.closedBeforeEnd = !response.writableFinished;
        resolve();
      }),
    );
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    recorded = {
      method: request.method ?? "",
      path: request.url ?? "",
      headers: request.headers,
      body: parseJson(rawBody),
      rawBody,
      remotePort: request.socket.remotePort,
      closed,
      closedBeforeEnd: false,
    };
    requests.push(recorded);
    for (const wake of waiters.splice(0)) wake();
    const reply = queue.shift() ?? (await (handler ?? createDefaultReply)(recorded));
    await writeReply(reply, response);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  return {
    baseUrl: `${origin}/v1`,
    origin,
    port,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setHandler: (next) => {
      handler = next;
    },
    waitForRequests: async (count, timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    close: async () => {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closing;
    },
  };
}

/** A complete `chat.completion` body. */
export function buildChatCompletion(
  options: {
    content?: string | null;
    reasoningContent?: string;
    refusal?: string;
    toolCalls?: Array<{ id: string; name: string; arguments: string }>;
    finishReason?: string;
    usage?: Record<string, unknown>;
    model?: string;
    id?: string;
  } = {},
): Record<string, unknown> {
  const toolCalls = options.toolCalls ?? [];
  return {
    id: options.id ?? "chatcmpl-fake0000000000000000000000001",
    object: "chat.completion",
    created: 1_700_000_000,
    model: options.model ?? "fake-model-2025-01-01",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content:
            options.content === undefined
              ? toolCalls.length > 0
                ? null
                : DEFAULT_REPLY_TEXT
              : options.content,
          refusal: options.refusal ?? null,
          ...(options.reasoningContent === undefined ? {} : { reasoning_content: options.reasoningContent }),
          ...(toolCalls.length === 0
            ? {}
            : {
                tool_calls: toolCalls.map((call) => ({
                  id: call.id,
                  type: "function",
                  function: { name: call.name, arguments: call.arguments },
                })),
              }),
        },
        logprobs: null,
        finish_reason: options.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      },
    ],
    usage: options.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    system_fingerprint: "fp_fake",
  };
}

/** One `chat.completion.chunk` for choice 0 with the given delta (modern shape: `"usage": null`). */
export function buildChunk(
  delta: Record<string, unknown>,
  options: { finishReason?: string | null; id?: string; model?: string } = {},
): Record<string, unknown> {
  return {
    id: options.id ?? "chatcmpl-fake0000000000000000000000001",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: options.model ?? "fake-model-2025-01-01",
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: options.finishReason ?? null }],
    usage: null,
  };
}

/** The usage-only final chunk (`choices: []`) sent when `stream_options.include_usage` is set. */
export function buildUsageChunk(
  usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  options: { id?: string; model?: string } = {},
): Record<string, unknown> {
  return {
    id: options.id ?? "chatcmpl-fake0000000000000000000000001",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: options.model ?? "fake-model-2025-01-01",
    system_fingerprint: "fp_fake",
    choices: [],
    usage,
  };
}

/** A whole text stream as OpenAI sends it: role chunk, one chunk per piece, finish, usage. */
export function buildTextChunks(
  pieces: string[],
  options: {
    finishReason?: string;
    usage?: Record<string, unknown> | null;
    model?: string;
    id?: string;
  } = {},
): Array<Record<string, unknown>> {
  const ids = { id: options.id, model: options.model };
  return [
    buildChunk({ role: "assistant", content: "", refusal: null }, ids),
    ...pieces.map((piece) => buildChunk({ content: piece }, ids)),
    buildChunk({}, { ...ids, finishReason: options.finishReason ?? "stop" }),
    ...(options.usage === null ? [] : [buildUsageChunk(options.usage, ids)]),
  ];
}

function toStep(item: SseStep | Record<string, unknown>): SseStep {
  const keys = Object.keys(item);
  const isStep =
    keys.length === 1 && ["data", "raw", "delayMs", "closeSocket", "hang"].includes(keys[0] ?? "");
  return isStep ? (item as SseStep) : { data: item };
}

function createDefaultReply(request: RecordedRequest): FakeReply {
  if (request.body?.stream === true) return fakeReply.sse(buildTextChunks([DEFAULT_REPLY_TEXT]));
  return fakeReply.json(buildChatCompletion());
}

async function writeReply(reply: FakeReply, response: ServerResponse): Promise<void> {
  switch (reply.kind) {
    case "json":
    case "error": {
      const body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      const status = reply.kind === "error" ? reply.status : (reply.status ?? 200);
      response.writeHead(status, { "content-type": "application/json", ...reply.headers });
      response.end(body);
      return;
    }
    case "hang":
      return;
    case "closeSocket":
      response.socket?.destroy();
      return;
    case "raw": {
      response.writeHead(reply.status ?? 200, {
        "content-type": "text/event-stream; charset=utf-8",
        ...reply.headers,
      });
      const bytes = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : reply.body;
      const size = reply.chunkSize ?? bytes.length;
      for (let offset = 0; offset < bytes.length; offset += size) {
        if (response.destroyed) return;
        response.write(bytes.subarray(offset, offset + size));
        if (reply.chunkDelayMs !== undefined) await sleep(reply.chunkDelayMs, response);
      }
      response.end();
      return;
    }
    case "sse": {
      response.writeHead(reply.status ?? 200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        ...reply.headers,
      });
      response.flushHeaders();
      for (const step of reply.steps) {
        if (response.destroyed) return;
        if ("data" in step) {
          response.write(
            `data: ${typeof step.data === "string" ? step.data : JSON.stringify(step.data)}\n\n`,
          );
        } else if ("raw" in step) {
          response.write(step.raw);
        } else if ("delayMs" in step) {
          await sleep(step.delayMs, response);
        } else if ("closeSocket" in step) {
          response.socket?.destroy();
          return;
        } else {
          return; // hang: keep the connection open, write nothing more
        }
      }
      if (reply.done !== false) response.write("data: [DONE]\n\n");
      response.end();
      return;
    }
  }
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Waits, but not past the response's end: a client that went away must not keep timers alive. */
function sleep(milliseconds: number, response: ServerResponse): Promise<void> {
  if (response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      response.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    response.on("close", done);
  });
}
