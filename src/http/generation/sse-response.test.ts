import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { createServer, get, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { test } from "node:test";
import type { CanonicalStreamPart } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { StreamEncoder } from "../../ingress/ingress-format.js";
import type { Logger } from "../../logging/logger.js";
import { type StreamedRun, writeSseResponse } from "./sse-response.js";

/** A ServerResponse stand-in that records what is written and can refuse writes (a full socket). */
class FakeOutgoing extends EventEmitter {
  status?: number;
  headers?: Record<string, string>;
  written: string[] = [];
  ended = false;
  socketFull = false;
  writableFinished = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, string>) {
    this.status = status;
    this.headers = headers;
    return this;
  }
  flushHeaders() {}
  write(text: string): boolean {
    this.written.push(text);
    return !this.socketFull;
  }
  end(text?: string) {
    if (text !== undefined) this.written.push(text);
    this.ended = true;
    this.writableFinished = true;
    this.emit("finish");
  }
  /** The client leaves: as Node does, 'close' on an unfinished response. */
  leave(abort: AbortController) {
    this.destroyed = true;
    this.emit("close");
    abort.abort();
  }
}

const settlement: Settlement = {
  usage: {
    inputTokens: 1,
    outputTokens: 2,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  },
  costMicroUsd: 3,
  finishReason: "stop",
};

const encoder: StreamEncoder = {
  push: (part) => (part.type === "text-delta" ? `data: ${part.delta}\n\n` : ""),
  finish: (done) => `data: [DONE ${done.costMicroUsd}]\n\n`,
  fail: (error) => `event: error\ndata: ${error.code}\n\n`,
  keepAlive: () => ": keep-alive\n\n",
};

/** `turns`: each part after the first arrives in a later turn of the event loop (a network chunk each). */
function createStream(
  parts: CanonicalStreamPart[],
  options: { slowStart?: boolean; hang?: boolean; turns?: boolean } = {},
) {
  const events: string[] = [];
  let release: (() => void) | undefined;
  const stream = {
    pulled: 0,
    cancelled: false,
    events,
    startedBeforeFirstPart: options.slowStart ?? false,
    async *parts() {
      for (const [index, part] of parts.entries()) {
        if (options.turns && index > 0) await new Promise((resolve) => setImmediate(resolve));
        if (stream.cancelled) return;
        stream.pulled += 1;
        yield part;
      }
      if (options.hang) await new Promise<void>((resolve) => (release = resolve));
    },
    cancel() {
      stream.cancelled = true;
      events.push("cancel");
      release?.();
    },
    settle() {
      events.push("settle");
      return new Promise<Settlement>((resolve) =>
        setImmediate(() => {
          events.push("settled");
          resolve(settlement);
        }),
      );
    },
  };
  return stream;
}

const logger = { error() {} } as unknown as Logger;
const text = (delta: string): CanonicalStreamPart => ({ type: "text-delta", id: "t", delta });
const finished = (outgoing: FakeOutgoing) =>
  new Promise<void>((resolve) => (outgoing.ended ? resolve() : outgoing.once("finish", resolve)));

function start(outgoing: FakeOutgoing, stream: ReturnType<typeof createStream>, keepAliveMs?: number) {
  const abort = new AbortController();
  writeSseResponse(outgoing as unknown as ServerResponse, stream as unknown as StreamedRun, encoder, {
    requestId: "req-1",
    logger,
    signal: abort.signal,
    keepAliveMs,
  });
  return abort;
}

test("headers, frames in order, then the final frame after settlement, then the end", async () => {
  const outgoing = new FakeOutgoing();
  const stream = createStream([text("a"), { type: "text-end", id: "t" }, text("b")], { slowStart: true });
  start(outgoing, stream);
  await finished(outgoing);
  assert.equal(outgoing.status, 200);
  assert.deepEqual(outgoing.headers, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    "X-Request-Id": "req-1",
  });
  // Frames made in one turn (here all of them) leave in one write; the last one goes with the end.
  assert.deepEqual(outgoing.written, [": keep-alive\n\ndata: a\n\ndata: b\n\n", "data: [DONE 3]\n\n"]);
  assert.deepEqual(stream.events, ["settle", "settled"]);
  assert.equal(outgoing.listenerCount("drain"), 0, "listeners removed");
});

test("an error part: settlement starts, the error frame is written, the end waits for settlement", async () => {
  const outgoing = new FakeOutgoing();
  const stream = createStream([
    text("a"),
    { type: "error", error: { code: "provider_overloaded", message: "x" } },
  ]);
  start(outgoing, stream);
  await new Promise((resolve) => setImmediate(resolve));
  await finished(outgoing);
  assert.equal(outgoing.written.join(""), "data: a\n\nevent: error\ndata: provider_overloaded\n\n");
  assert.deepEqual(stream.events, ["settle", "settled"]);
});

test("a full socket holds the parts of later turns back until 'drain'", async () => {
  const outgoing = new FakeOutgoing();
  outgoing.socketFull = true;
  const stream = createStream([text("a"), text("b"), text("c")], { turns: true });
  start(outgoing, stream);
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  // `a` was refused when its turn ended; `b`, made in the next turn, is the last part pulled.
  assert.equal(stream.pulled, 2, "waits for drain after the refused write");
  assert.deepEqual(outgoing.written, ["data: a\n\n", "data: b\n\n"]);
  outgoing.socketFull = false;
  outgoing.emit("drain");
  await finished(outgoing);
  assert.equal(stream.pulled, 3);
  assert.equal(outgoing.written.join(""), "data: a\n\ndata: b\n\ndata: c\n\ndata: [DONE 3]\n\n");
});

test("the client leaving cancels the upstream, stops keep-alives, settles, and writes nothing more", async () => {
  const outgoing = new FakeOutgoing();
  const stream = createStream([text("a")], { hang: true });
  const abort = start(outgoing, stream, 5);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(outgoing.written.includes(": keep-alive\n\n"), "keep-alives flow while the upstream is quiet");
  outgoing.leave(abort);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const count = outgoing.written.length;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(outgoing.written.length, count, "no keep-alive after the client left");
  assert.deepEqual(stream.events, ["cancel", "settle", "settled"]);
  assert.equal(outgoing.ended, false, "a gone response is not ended");
  assert.equal(outgoing.listenerCount("drain"), 0);
});

test("a client gone while the socket was full releases the waiting writer", async () => {
  const outgoing = new FakeOutgoing();
  outgoing.socketFull = true;
  const stream = createStream([text("a"), text("b"), text("c")], { turns: true });
  const abort = start(outgoing, stream);
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  outgoing.leave(abort);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(stream.events, ["cancel", "settle", "settled"]);
  assert.deepEqual(outgoing.written, ["data: a\n\n", "data: b\n\n"]);
});

test("on a real socket, the last frames and the chunked terminator leave in one write", async (t) => {
  /** What each socket write carried (a writev's chunks joined). */
  const socketWrites: string[] = [];
  const server = createServer((_request, response) => {
    const socket = response.socket as Socket & {
      _write(chunk: Buffer | string, encoding: BufferEncoding, callback: () => void): void;
      _writev(chunks: Array<{ chunk: Buffer | string }>, callback: () => void): void;
    };
    const write = socket._write.bind(socket);
    const writev = socket._writev.bind(socket);
    socket._write = (chunk, encoding, callback) => {
      socketWrites.push(String(chunk));
      write(chunk, encoding, callback);
    };
    socket._writev = (chunks, callback) => {
      socketWrites.push(chunks.map(({ chunk }) => String(chunk)).join(""));
      writev(chunks, callback);
    };
    const stream = createStream([text("a"), text("b")]);
    writeSseResponse(response, stream as unknown as StreamedRun, encoder, {
      requestId: "req-1",
      logger,
      signal: new AbortController().signal,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const body = await new Promise<string>((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/", agent: false }, (response) => {
      let received = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (received += chunk));
      response.on("end", () => resolve(received));
    }).on("error", reject);
  });
  assert.equal(body, "data: a\n\ndata: b\n\ndata: [DONE 3]\n\n");
  const last = socketWrites.at(-1) ?? "";
  assert.ok(
    last.includes("data: [DONE 3]"),
    `the final frame is in the last write: ${JSON.stringify(socketWrites)}`,
  );
  assert.ok(last.endsWith("0\r\n\r\n"), `the terminator shares its write: ${JSON.stringify(socketWrites)}`);
});
