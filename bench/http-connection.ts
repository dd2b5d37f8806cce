/**
 * One keep-alive HTTP/1.1 connection of the load generator, one request at a time. Requests are
 * pre-serialised bytes, so the generator spends its core on the wire and not on building headers
 * (it shares that core with the upstream; the leaner it is, the more headroom the target gets).
 */
import { connect, type Socket } from "node:net";
import { type ParsedResponse, ResponseParser } from "./response-parser.js";

export interface ExchangeResult {
  /** performance.now() when the request was written. */
  sentAt: number;
  endedAt: number;
  response?: ParsedResponse;
  /** Set when no complete response arrived (reset, timeout, protocol error). */
  error?: string;
}

export class HttpConnection {
  private socket?: Socket;
  private parser?: ResponseParser;
  private settle?: (result: ExchangeResult) => void;
  private sentAt = 0;
  private timer?: NodeJS.Timeout;
  private alive = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  get isAlive(): boolean {
    return this.alive;
  }

  connect(timeoutMs = 5_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.host, port: this.port, noDelay: true });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect timeout ${this.host}:${this.port}`));
      }, timeoutMs);
      socket.once("connect", () => {
        clearTimeout(timer);
        this.alive = true;
        resolve();
      });
      socket.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.on("data", (chunk: Buffer) => this.onData(chunk));
      socket.on("close", () => this.onClose());
      socket.on("error", () => {}); // Reported through `close`.
      this.socket = socket;
    });
  }

  /** Sends `request` and resolves when its response is complete (never rejects). */
  exchange(request: Buffer, options: { timeoutMs: number; capture?: boolean }): Promise<ExchangeResult> {
    if (this.settle) throw new Error("exchange already in progress on this connection");
    const sentAt = performance.now();
    if (!this.alive || !this.socket) {
      return Promise.resolve({ sentAt, endedAt: sentAt, error: "connection closed" });
    }
    this.parser = new ResponseParser(options.capture ?? false);
    this.sentAt = sentAt;
    return new Promise((resolve) => {
      this.settle = resolve;
      this.timer = setTimeout(() => this.fail(`timeout after ${options.timeoutMs} ms`), options.timeoutMs);
      this.socket!.write(request);
    });
  }

  close(): void {
    this.alive = false;
    this.socket?.destroy();
  }

  private onData(chunk: Buffer): void {
    const parser = this.parser;
    if (!parser || !this.settle) {
      this.fail("data without a request");
      return;
    }
    const now = performance.now();
    let leftover: number;
    try {
      leftover = parser.feed(chunk, now);
    } catch (error) {
      this.fail((error as Error).message);
      return;
    }
    if (!parser.done) return;
    const response = parser.response;
    if (leftover > 0 || !response.keepAlive) this.close();
    this.complete({ sentAt: this.sentAt, endedAt: now, response });
  }

  private onClose(): void {
    this.alive = false;
    const parser = this.parser;
    if (!this.settle || !parser) return;
    try {
      parser.finishOnClose();
      this.complete({ sentAt: this.sentAt, endedAt: performance.now(), response: parser.response });
    } catch (error) {
      this.fail((error as Error).message);
    }
  }

  private fail(message: string): void {
    this.close();
    this.complete({ sentAt: this.sentAt, endedAt: performance.now(), error: message });
  }

  private complete(result: ExchangeResult): void {
    const settle = this.settle;
    clearTimeout(this.timer);
    this.settle = undefined;
    this.parser = undefined;
    settle?.(result);
  }
}

/** Pre-serialises a request (keep-alive, JSON body) for {@link HttpConnection.exchange}. */
export function buildRawRequest(options: {
  method: "GET" | "POST";
  host: string;
  port: number;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}): Buffer {
  const body = options.body === undefined ? Buffer.alloc(0) : Buffer.from(options.body, "utf8");
  const lines = [
    `${options.method} ${options.path} HTTP/1.1`,
    `Host: ${options.host}:${options.port}`,
    "Connection: keep-alive",
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  if (options.body !== undefined)
    lines.push("Content-Type: application/json", `Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body]);
}
