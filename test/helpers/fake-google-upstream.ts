/**
 * A scriptable loopback server that speaks the Gemini API wire format (wire-formats.md §4), for
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
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedGoogleRequest {
  method: string;
  /** Path and query, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`. */
  path: string;
  /** Lowercased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; `undefined` when empty or not JSON (see `rawBody`). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields from it.
  body: any;
  rawBody: string;
  /** The client's port: equal ports on two requests mean a reused keep-alive connection. */
  remotePort: number | undefined;
  /** Resolves when the response is over: finished, or its connection closed. */
  closed: Promise<void>;
  /** Set when the connection closed before the response was fully written (client went away). */
  closedBeforeEnd: boolean;
}

export type GoogleSseStep =
  | { data: unknown }
  | { raw: string }
  | { delayMs: number }
  | { closeSocket: true }
  | { hang: true };

interface ReplyInit {
  status?: number;
  headers?: Record<string, string>;
}

export type FakeGoogleReply =
  | ({ kind: "json"; body: unknown } & ReplyInit)
  | ({ kind: "sse"; steps: GoogleSseStep[] } & ReplyInit)
  | ({ kind: "raw"; body: string | Buffer; chunkSize?: number; chunkDelayMs?: number } & ReplyInit)
  | { kind: "error"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "hang" }
  | { kind: "closeSocket" };

export type FakeGoogleHandler = (
  request: RecordedGoogleRequest,
) => FakeGoogleReply | Promise<FakeGoogleReply>;

export interface FakeGoogleUpstream {
  /** `http://127.0.0.1:<port>/v1beta`: use as a provider's base URL. */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: RecordedGoogleRequest[];
  /** Queues replies for the next requests, in order. */
  enqueue(...replies: FakeGoogleReply[]): void;
  /** Sets (or clears) the fallback used when the queue is empty. */
  setHandler(handler: FakeGoogleHandler | undefined): void;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Stops listening and destroys open connections (hanging replies included). */
  close(): Promise<void>;
}

export const DEFAULT_GEMINI_TEXT = "Hello from the fake Gemini upstream.";
export const DEFAULT_GEMINI_MODEL_VERSION = "gemini-fake-2.5";
export const DEFAULT_GEMINI_RESPONSE_ID = "ZmFrZUdlbWluaVJlc3BvbnNl";
/** prompt 10 + candidates 5 + thoughts 0 = total 15. */
export const DEFAULT_GEMINI_USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

/** Builders for {@link FakeGoogleReply} values. */
export const fakeGoogleReply = {
  json: (body: unknown, init: ReplyInit = {}): FakeGoogleReply => ({ kind: "json", body, ...init }),
  /** `chunks` are response chunks (each becomes one CRLF `data:` frame) or steps. */
  sse: (chunks: Array<GoogleSseStep | Record<string, unknown>>, init: ReplyInit = {}): FakeGoogleReply => ({
    kind: "sse",
    steps: chunks.map(toStep),
    ...init,
  }),
  raw: (
    body: string | Buffer,
    init: ReplyInit & { chunkSize?: number; chunkDelayMs?: number } = {},
  ): FakeGoogleReply => ({ kind: "raw", body, ...init }),
  error: (status: number, body: unknown, headers: Record<string, string> = {}): FakeGoogleReply => ({
    kind: "error",
    status,
    body,
    headers,
  }),
  hang: (): FakeGoogleReply => ({ kind: "hang" }),
  closeSocket: (): FakeGoogleReply => ({ kind: "closeSocket" }),
};

export async function startFakeGoogleUpstream(
  options: { handler?: FakeGoogleHandler } = {},
): Promise<FakeGoogleUpstream> {
  const queue: FakeGoogleReply[] = [];
  const requests: RecordedGoogleRequest[] = [];
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
    let recorded: RecordedGoogleRequest | undefined;
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
    baseUrl: `${origin}/v1beta`,
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

function toStep(item: GoogleSseStep | Record<string, unknown>): GoogleSseStep {
  const keys = Object.keys(item);
  const isStep =
    keys.length === 1 && ["data", "raw", "delayMs", "closeSocket", "hang"].includes(keys[0] ?? "");
  return isStep ? (item as GoogleSseStep) : { data: item };
}

function createDefaultReply(request: RecordedGoogleRequest): FakeGoogleReply {
  if (request.path.includes(":streamGenerateContent")) {
    return fakeGoogleReply.sse(buildGeminiTextChunks([DEFAULT_GEMINI_TEXT]));
  }
  return fakeGoogleReply.json(buildGenerateContentResponse());
}

async function writeReply(reply: FakeGoogleReply, response: ServerResponse): Promise<void> {
  switch (reply.kind) {
    case "json":
    case "error": {
      const body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      const status = reply.kind === "error" ? reply.status : (reply.status ?? 200);
      response.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...reply.headers });
      response.end(body);
      return;
    }
    case "hang":
      return;
    case "closeSocket":
      response.socket?.destroy();
      return;
    case "raw": {
      response.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
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
      // The real API sends `text/event-stream` without a charset (wire-formats.md §0).
      response.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
      response.flushHeaders();
      for (const step of reply.steps) {
        if (response.destroyed) return;
        if ("data" in step) {
          response.write(
            `data: ${typeof step.data === "string" ? step.data : JSON.stringify(step.data)}\r\n\r\n`,
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
