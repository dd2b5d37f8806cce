/**
 * The bench's loopback upstream: answers `POST /v1/chat/completions` and `POST /v1/messages`, JSON
 * or SSE (by the body's `stream`), from bodies built once at start. Fast models answer at once
 * (first frame immediately, the rest on the next turn of the event loop, so time-to-first-byte
 * and total time differ as they do upstream); a model whose name contains `slow` streams one token
 * every `slowIntervalMs` (the 1,000-stream memory scenario).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  buildChatCompletionBody,
  buildChatStreamFrames,
  buildMessageBody,
  buildMessageStreamFrames,
} from "./upstream-bodies.js";

export interface BenchUpstreamOptions {
  port?: number;
  /** Tokens of a fast streamed answer (one SSE frame each). */
  streamTokens?: number;
  /** Tokens of a slow streamed answer. */
  slowTokens?: number;
  slowIntervalMs?: number;
}

export interface BenchUpstream {
  port: number;
  origin: string;
  close(): Promise<void>;
}

/** The upstream model names the bench uses; anything containing "slow" is slow. */
export const FAST_UPSTREAM_MODEL = "bench-fast";
export const SLOW_UPSTREAM_MODEL = "bench-slow";

interface Answers {
  json: Buffer;
  /** Frames written at once when the response starts (everything up to the first token). */
  head: string;
  /** Token frames. */
  tokens: string[];
  /** Frames after the last token. */
  tail: string;
}

const MAX_BODY_BYTES = 1024 * 1024;
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

export async function startBenchUpstream(options: BenchUpstreamOptions = {}): Promise<BenchUpstream> {
  const streamTokens = options.streamTokens ?? 24;
  const slowTokens = options.slowTokens ?? 30;
  const slowIntervalMs = options.slowIntervalMs ?? 100;
  const answers = new Map<string, Answers>();
  const chatAnswers = (model: string, tokens: number): Answers => {
    const frames = buildChatStreamFrames(model, tokens);
    // role frame | token frames | finish, usage, [DONE]
    return {
      json: Buffer.from(buildChatCompletionBody(model, tokens)),
      head: frames[0],
      tokens: frames.slice(1, -3),
      tail: frames.slice(-3).join(""),
    };
  };
  const messageAnswers = (model: string, tokens: number): Answers => {
    const frames = buildMessageStreamFrames(model, tokens);
    // message_start, content_block_start, ping | token frames | stop frames
    return {
      json: Buffer.from(buildMessageBody(model, tokens)),
      head: frames.slice(0, 3).join(""),
      tokens: frames.slice(3, -3),
      tail: frames.slice(-3).join(""),
    };
  };
  for (const [model, tokens] of [
    [FAST_UPSTREAM_MODEL, streamTokens],
    [SLOW_UPSTREAM_MODEL, slowTokens],
  ] as const) {
    answers.set(`chat ${model}`, chatAnswers(model, tokens));
    answers.set(`messages ${model}`, messageAnswers(model, tokens));
  }

  const sockets = new Set<Socket>();
  const server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
    void answer(request, response).catch(() => response.destroy());
  });
  server.on("connection", (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const kind =
      request.url === "/v1/chat/completions"
        ? "chat"
        : request.url === "/v1/messages"
          ? "messages"
          : undefined;
    const body = await readBody(request);
    if (request.method !== "POST" || kind === undefined || body === undefined) {
      response.writeHead(kind === undefined ? 404 : 400, { "content-type": "application/json" });
      response.end(
        '{"error":{"message":"bench upstream: unknown route or bad body","type":"invalid_request"}}',
      );
      return;
    }
    const model =
      typeof body.model === "string" && body.model.includes("slow")
        ? SLOW_UPSTREAM_MODEL
        : FAST_UPSTREAM_MODEL;
    const found = answers.get(`${kind} ${model}`)!;
    if (body.stream !== true) {
      response.writeHead(200, { "content-type": "application/json", "content-length": found.json.length });
      response.end(found.json);
      return;
    }
    response.writeHead(200, SSE_HEADERS);
    if (model === SLOW_UPSTREAM_MODEL) writeSlowly(response, found, slowIntervalMs);
    else writeFast(response, found);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

function writeFast(response: ServerResponse, answers: Answers): void {
  response.write(answers.head + (answers.tokens[0] ?? ""));
  setImmediate(() => {
    if (response.destroyed) return;
    response.end(answers.tokens.slice(1).join("") + answers.tail);
  });
}

function writeSlowly(response: ServerResponse, answers: Answers, intervalMs: number): void {
  response.write(answers.head);
  let next = 0;
  const timer = setInterval(() => {
    if (response.destroyed) {
      clearInterval(timer);
      return;
    }
    if (next < answers.tokens.length) {
      response.write(answers.tokens[next]);
      next += 1;
      return;
    }
    clearInterval(timer);
    response.end(answers.tail);
  }, intervalMs);
  response.once("close", () => clearInterval(timer));
}

// biome-ignore lint/suspicious/noExplicitAny: the upstream only reads `model` and `stream`.
async function readBody(request: IncomingMessage): Promise<Record<string, any> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    const parsed = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
    return parsed !== null && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
