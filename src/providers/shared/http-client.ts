/**
 * The one place that performs upstream HTTP. undici pools per origin with
 * keep-alive; every phase has a deadline (`UpstreamDeadlines`, from `ProviderConfig.timeouts`):
 * - `connectMs` → the pool's connect timeout (TCP + TLS),
 * - `headMs`    → undici `headersTimeout` (request written → response headers; which provider
 *                 deadline it is depends on the call, select-head-deadline.ts),
 * - `idleMs`    → undici `bodyTimeout`, which undici re-arms on every body chunk, so it is an
 *                 idle deadline between chunks and fires when the upstream stalls after headers.
 * Redirects are never followed: neither `Pool.request` nor `Pool.dispatch` handles them, and a 3xx
 * is reported as an upstream failure (a provider base URL that redirects is a configuration error,
 * and following it would hand our credentials to another origin).
 *
 * Streams use `send()` (undici's `request()`: a `Readable` body the caller consumes); a whole JSON
 * answer uses `sendForText()`, which collects the body from undici's dispatch callbacks and costs a
 * fraction of the CPU (text-response-collector.ts).
 */
import { type Dispatcher, Pool } from "undici";
import { GatewayError } from "../../errors/gateway-error.js";
import { classifyUpstreamError, type UpstreamHeaders } from "./classify-upstream-error.js";
import { dispatchForText, type UpstreamTextResponse } from "./text-response-collector.js";
import { toUpstreamFailure } from "./upstream-failure.js";

export type { UpstreamTextResponse } from "./text-response-collector.js";
export { mapNetworkError, toUpstreamFailure } from "./upstream-failure.js";

export type UpstreamBody = Dispatcher.ResponseData["body"];

/**
 * What a streamed body reads ahead of its consumer before undici stops reading the socket. Every
 * network chunk (up to 64 KiB) is taken whole, so this decides whether a stream that waits for
 * its client holds one chunk or two; undici's default is 64 KiB (decision 0345).
 */
const STREAM_BODY_HIGH_WATER_BYTES = 16 * 1024;

export interface UpstreamHttpRequest {
  /** Absolute URL, e.g. `${provider.baseUrl}/chat/completions`. */
  url: string;
  method?: "GET" | "POST";
  headers: Record<string, string>;
  /** JSON text, or its UTF-8 bytes (a large body, encoded in steps by the caller). */
  body?: string | Buffer;
  timeouts: UpstreamDeadlines;
  /** Aborting cancels the request or the body being read (undici destroys the socket). */
  signal?: AbortSignal;
}

export interface UpstreamDeadlines {
  /** TCP and TLS. */
  connectMs: number;
  /** Request written → response head. */
  headMs: number;
  /** Between two body chunks. */
  idleMs: number;
}

export interface UpstreamHttpResponse {
  status: number;
  headers: UpstreamHeaders;
  /** Unconsumed body; the caller must read it to the end or `destroy()` it. */
  body: UpstreamBody;
}

export interface UpstreamHttpClient {
  /**
   * Sends the request and resolves once response headers arrive with a 2xx status. Rejects with a
   * GatewayError for non-2xx responses (classified from status, headers and body) and network
   * failures. When `signal` aborts, rejects with `signal.reason` (AbortSignal convention: the
   * caller that aborted knows why, so no provider failure is invented).
   */
  send(request: UpstreamHttpRequest): Promise<UpstreamHttpResponse>;
  /**
   * Sends the request and reads the whole 2xx body as UTF-8 text (at most `maxBytes`, default
   * {@link DEFAULT_MAX_RESPONSE_BYTES}); the connection goes back to the pool. Rejects like `send`,
   * and with a GatewayError when the body fails, stalls past its idle deadline or exceeds the cap.
   */
  sendForText(request: UpstreamHttpRequest & { maxBytes?: number }): Promise<UpstreamTextResponse>;
  /** Closes every pool, waiting for in-flight requests. */
  close(): Promise<void>;
  /** Destroys every pool and its sockets immediately. */
  destroy(): Promise<void>;
}

export interface UpstreamHttpClientOptions {
  /** How long an idle keep-alive socket is kept (default 30 s). */
  keepAliveTimeoutMs?: number;
  /** How much of an error body is read for classification (default 64 KiB). */
  maxErrorBodyBytes?: number;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
const DEFAULT_MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Cap for a non-streamed response body; far above any real completion. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export function createUpstreamHttpClient(options: UpstreamHttpClientOptions = {}): UpstreamHttpClient {
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_MS;
  const maxErrorBodyBytes = options.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES;
  // Keyed by origin and connect deadline: the connect timeout is a pool option, and two providers
  // on one origin may configure different ones.
  const pools = new Map<string, Pool>();

  function getPool(origin: string, connectMs: number): Pool {
    const key = `${origin} ${connectMs}`;
    let pool = pools.get(key);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connect: { timeout: connectMs },
        keepAliveTimeout,
        keepAliveMaxTimeout: Math.max(keepAliveTimeout, 600_000),
        // One request per socket at a time: a slow stream must never block another request.
        pipelining: 1,
      });
      pools.set(key, pool);
    }
    return pool;
  }

  async function send(request: UpstreamHttpRequest): Promise<UpstreamHttpResponse> {
    const target = resolveTarget(request.url);
    const pool = getPool(target.origin, request.timeouts.connectMs);
    let response: Dispatcher.ResponseData;
    try {
      response = await pool.request({
        signal: request.signal,
        highWaterMark: STREAM_BODY_HIGH_WATER_BYTES,
        ...toDispatchOptions(request, target),
      });
    } catch (error) {
      throw toUpstreamFailure(error, request.signal);
    }
    const headers = response.headers as UpstreamHeaders;
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return { status: response.statusCode, headers, body: response.body };
    }
    if (request.signal?.aborted) {
      response.body.destroy();
      throw request.signal.reason;
    }
    // A truncated or stalled error body still classifies by status and headers.
    const bodyText = await readLimitedText(response.body, maxErrorBodyBytes).catch(() => "");
    throw classifyUpstreamError({ status: response.statusCode, headers, bodyText });
  }

  function sendForText(request: UpstreamHttpRequest & { maxBytes?: number }): Promise<UpstreamTextResponse> {
    const target = resolveTarget(request.url);
    const pool = getPool(target.origin, request.timeouts.connectMs);
    const limits = { maxBytes: request.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES, maxErrorBodyBytes };
    return dispatchForText(pool, toDispatchOptions(request, target), limits, request.signal);
  }

  async function closeAll(method: "close" | "destroy"): Promise<void> {
    const all = [...pools.values()];
    pools.clear();
    await Promise.all(all.map((pool) => pool[method]().catch(() => undefined)));
  }

  return { send, sendForText, close: () => closeAll("close"), destroy: () => closeAll("destroy") };
}

/** What undici needs of a request; the first-byte and idle deadlines are undici's own timers. */
function toDispatchOptions(request: UpstreamHttpRequest, target: UpstreamTarget): Dispatcher.DispatchOptions {
  return {
    path: target.path,
    method: request.method ?? "POST",
    headers: request.headers,
    body: request.body ?? null,
    headersTimeout: request.timeouts.headMs,
    bodyTimeout: request.timeouts.idleMs,
  };
}

interface UpstreamTarget {
  origin: string;
  /** Path and query, as undici's `path` option wants it. */
  path: string;
}

/** Far more than the distinct upstream URLs of any configuration (base URL × endpoint × model). */
const MAX_CACHED_TARGETS = 1024;
const targets = new Map<string, UpstreamTarget>();

/**
 * The origin and path of an upstream URL. Provider base URLs are few and fixed, so the parse is
 * cached per URL string instead of building a `URL` per request; the cache is dropped whole if it
 * ever fills (URLs that embed something unbounded).
 */
function resolveTarget(url: string): UpstreamTarget {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}

let sharedClient: UpstreamHttpClient | undefined;

/** The process-wide client used by adapters that are not given one. Pools are created lazily. */
export function getSharedUpstreamHttpClient(): UpstreamHttpClient {
  sharedClient ??= createUpstreamHttpClient();
  return sharedClient;
}

/**
 * Reads a whole 2xx body as UTF-8 text. Rejects with a GatewayError on network failure, deadline
 * or when the body exceeds `maxBytes`; with `signal.reason` when `signal` aborted.
 */
export async function readUpstreamText(
  body: UpstreamBody,
  options: { maxBytes?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buffer.length;
      if (size > maxBytes) {
        body.destroy();
        throw new GatewayError("provider_unavailable", "The upstream response exceeded the size limit");
      }
      chunks.push(buffer);
    }
  } catch (error) {
    throw toUpstreamFailure(error, options.signal);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads at most `maxBytes` of a body, then drops the rest (destroying the socket). */
async function readLimitedText(body: UpstreamBody, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buffer);
    size += buffer.length;
    if (size >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString("utf8");
}
