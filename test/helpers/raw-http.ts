/**
 * HTTP requests with exactly the headers and bytes given (fetch would add a Content-Type and
 * refuse some header values), each answered within a deadline: the fuzz tests' client.
 */
import { Agent, request } from "node:http";

export interface RawRequest {
  method: string;
  /** Path and query, sent as is. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The whole answer must have arrived by then. */
  deadlineMs: number;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  elapsedMs: number;
}

export interface RawClient {
  send(request: RawRequest): Promise<RawAnswer>;
  close(): void;
}

export function createRawClient(baseUrl: string): RawClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send: (raw) => sendRaw(agent, baseUrl, raw),
    close: () => agent.destroy(),
  };
}

function sendRaw(agent: Agent, baseUrl: string, raw: RawRequest): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${baseUrl}${raw.path}`,
      { method: raw.method, headers: raw.headers, agent },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("error", fail);
        incoming.on("end", () => {
          clearTimeout(timer);
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text: Buffer.concat(chunks).toString("utf8"),
            elapsedMs: performance.now() - started,
          });
        });
      },
    );
    function fail(error: Error) {
      clearTimeout(timer);
      reject(error);
    }
    const timer = setTimeout(() => {
      outgoing.destroy();
      reject(new Error(`no complete answer within ${raw.deadlineMs} ms: ${raw.method} ${raw.path}`));
    }, raw.deadlineMs);
    outgoing.on("error", fail);
    outgoing.end(raw.body);
  });
}
