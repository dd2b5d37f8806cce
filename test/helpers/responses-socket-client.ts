/**
 * A plain WebSocket client of the Responses WebSocket mode that speaks the protocol as Codex does:
 * the key in `Authorization: Bearer` and an `OpenAI-Beta` header on the handshake, one
 * `response.create` JSON text message per turn, and every event read as one JSON text message
 * until the turn's terminal event (`response.completed`, `response.incomplete`,
 * `response.failed`, or an `error` event that carries a `status`).
 */
import WebSocket from "ws";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields from events.
export type SocketEvent = Record<string, any>;

export interface SocketClose {
  code: number;
  reason: string;
}

const TERMINAL_TYPES = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The event that ends a turn: the response's last event, or a refusal before it began. */
export function isTerminalEvent(event: SocketEvent): boolean {
  return TERMINAL_TYPES.has(event.type) || (event.type === "error" && typeof event.status === "number");
}

export function toSocketUrl(gatewayUrl: string, path = "/api/v1/responses"): string {
  return `${gatewayUrl.replace(/^http/, "ws")}${path}`;
}

export class ResponsesSocketClient {
  readonly closed: Promise<SocketClose>;
  private readonly events: SocketEvent[] = [];
  private waiter: (() => void) | undefined;
  private closeInfo: SocketClose | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      this.events.push(JSON.parse(String(data)) as SocketEvent);
      this.waiter?.();
    });
    this.closed = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        this.closeInfo = { code, reason: String(reason) };
        this.waiter?.();
        resolve(this.closeInfo);
      });
    });
  }

  /** Opens a socket; rejects with the refusal (`status`, parsed `body`) when the handshake is refused. */
  static connect(
    url: string,
    apiKey: string | undefined,
    options: { headers?: Record<string, string>; autoPong?: boolean } = {},
  ): Promise<ResponsesSocketClient> {
    const headers: Record<string, string> = { "OpenAI-Beta": "responses_websockets=2026-02-06" };
    if (apiKey !== undefined) headers.Authorization = `Bearer ${apiKey}`;
    Object.assign(headers, options.headers);
    const socket = new WebSocket(url, { headers, autoPong: options.autoPong ?? true });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new ResponsesSocketClient(socket)));
      socket.once("unexpected-response", (_request, response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => {
          text += chunk;
        });
        response.on("end", () =>
          reject(
            Object.assign(new Error(`handshake refused: ${response.statusCode}`), {
              status: response.statusCode,
              headers: response.headers,
              body: text === "" ? undefined : JSON.parse(text),
            }),
          ),
        );
      });
      socket.once("error", reject);
    });
  }

  send(message: Record<string, unknown> | string): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The next event; rejects when the socket closes first or nothing comes within `timeoutMs`. */
  async nextEvent(timeoutMs = 20_000): Promise<SocketEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = this.events.shift();
      if (event !== undefined) return event;
      if (this.closeInfo !== undefined) {
        throw new Error(
          `socket closed (${this.closeInfo.code} ${this.closeInfo.reason}) before the next event`,
        );
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no event within the deadline");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          this.waiter = undefined;
          resolve();
        };
      });
    }
  }

  /** The events up to and including the next terminal event. */
  async readTurn(timeoutMs = 20_000): Promise<SocketEvent[]> {
    const events: SocketEvent[] = [];
    for (;;) {
      const event = await this.nextEvent(timeoutMs);
      events.push(event);
      if (isTerminalEvent(event)) return events;
    }
  }

  /** Sends one `response.create` and reads its turn. */
  turn(fields: Record<string, unknown>, timeoutMs?: number): Promise<SocketEvent[]> {
    this.send({ type: "response.create", ...fields });
    return this.readTurn(timeoutMs);
  }

  async close(): Promise<SocketClose> {
    if (this.closeInfo === undefined) this.socket.close(1000, "done");
    return this.closed;
  }
}
