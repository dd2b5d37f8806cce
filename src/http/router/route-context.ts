/**
 * What a route's handler gets: the request (path parameters, query, headers, and on demand a web
 * `Request` over the Node request), the Node request and response themselves, the request's id,
 * arrival time, logger and log line, and helpers that build the web `Response` the router writes.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { HeaderReader } from "../../ingress/ingress-format.js";
import type { Logger } from "../../logging/logger.js";
import { createNodeHeaderReader } from "./node-header-reader.js";
import type { RequestLogEntry } from "./request-log.js";

/** What the router knows of a request before its handler runs. */
export interface RequestExchange {
  requestId: string;
  /** performance.now() at arrival. */
  startedAt: number;
  logger: Logger;
  /** The request's log line, written by the router when the request has ended. */
  requestLog: RequestLogEntry;
}

export class RouteRequest {
  #raw: Request | undefined;
  #query: URLSearchParams | undefined;
  #headers: HeaderReader | undefined;

  constructor(
    readonly incoming: IncomingMessage,
    readonly method: string,
    readonly path: string,
    private readonly queryText: string,
    private readonly params: Readonly<Record<string, string>>,
  ) {}

  param(name: string): string | undefined {
    return this.params[name];
  }

  query(name: string): string | undefined {
    this.#query ??= new URLSearchParams(this.queryText);
    return this.#query.get(name) ?? undefined;
  }

  /** The request's headers, read as web `Headers` reads them, straight from the Node request. */
  get headers(): HeaderReader {
    this.#headers ??= createNodeHeaderReader(this.incoming);
    return this.#headers;
  }

  /** A request header (repeated lines joined), undefined when absent. */
  header(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }

  /**
   * The request as a web `Request`, built on first use; its body streams from the Node request,
   * so a handler reads the body either here or from the Node request, never both.
   */
  get raw(): Request {
    this.#raw ??= createWebRequest(this.incoming);
    return this.#raw;
  }
}

export class RouteContext {
  /** The Node request and response, for handlers that answer on them directly. */
  readonly incoming: IncomingMessage;
  readonly outgoing: ServerResponse;
  readonly requestId: string;
  /** performance.now() at arrival. */
  readonly startedAt: number;
  readonly logger: Logger;
  /** The request's log line, written by the router when the request has ended. */
  readonly requestLog: RequestLogEntry;
  #headers: Record<string, string> | undefined;

  constructor(
    readonly req: RouteRequest,
    outgoing: ServerResponse,
    exchange: RequestExchange,
    private readonly answerNotFound: (c: RouteContext) => Response,
  ) {
    this.incoming = req.incoming;
    this.outgoing = outgoing;
    this.requestId = exchange.requestId;
    this.startedAt = exchange.startedAt;
    this.logger = exchange.logger;
    this.requestLog = exchange.requestLog;
  }

  /** A header for the answer built next by `json`, `body`, `text` or `redirect`. */
  header(name: string, value: string): void {
    this.#headers ??= {};
    this.#headers[name] = value;
  }

  json(value: unknown, status = 200): Response {
    return this.respond(JSON.stringify(value), status, { "Content-Type": "application/json" });
  }

  body(text: string, status = 200): Response {
    return this.respond(text, status, {});
  }

  text(text: string, status = 200): Response {
    return this.respond(text, status, { "Content-Type": "text/plain; charset=UTF-8" });
  }

  redirect(location: string, status = 302): Response {
    return this.respond(null, status, { Location: location });
  }

  /** The router's 404 for this request (an unknown file of a static folder). */
  notFound(): Response {
    return this.answerNotFound(this);
  }

  private respond(body: string | null, status: number, headers: Record<string, string>): Response {
    return new Response(body, { status, headers: Object.assign({}, headers, this.#headers) });
  }
}

function createWebRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) headers.append(raw[index], raw[index + 1]);
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(`http://localhost${incoming.url ?? "/"}`, {
    method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}
