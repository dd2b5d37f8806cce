/**
 * The outbound fetcher of server tools (web_fetch; later pdf `file_url`): a GET of a URL a model or
 * a caller chose, which must never reach this machine, the private network or a cloud metadata
 * service. The rules hold by construction:
 * - the URL is checked before anything is sent (scheme, credentials, port, IP literal, host name:
 *   check-fetch-url.ts), and so is every redirect target, resolved against the URL that sent it;
 * - sockets are opened only by the pinned connector, which resolves once, checks every address and
 *   connects to the checked address (pinned-connector.ts, address-policy.ts);
 * - one deadline covers DNS, connects, every redirect and the body; the body is capped in bytes on
 *   the wire and after decompression; redirects are capped in number;
 * - the request carries a fixed User-Agent and nothing of the caller: no credentials, cookies or
 *   forwarded headers; a connection serves one request and is closed (no pooled socket outlives
 *   the fetch).
 * A page problem returns a {@link FetchFailure}; only the caller's own abort rejects.
 */
import type { Readable } from "node:stream";
import { Agent, type Dispatcher } from "undici";
import type { WebFetchSettings } from "../../config/server-tools/web-fetch-config.js";
import { checkFetchUrl, refusedAddressMessage, type UrlPolicy } from "./check-fetch-url.js";
import { type ContentType, parseContentType } from "./content-type.js";
import { type FetchFailure, fetchFailure, timeoutMessage } from "./fetch-failure.js";
import {
  BlockedDestinationError,
  createPinnedConnector,
  openSocketWithUndici,
  type SocketOpener,
} from "./pinned-connector.js";
import { discardBody, readCappedBody } from "./read-capped-body.js";
import { HostResolutionError, type HostResolver, resolveHostAddresses } from "./resolve-host.js";

/** Sent with every fetch, and nothing else of ours or the caller's. */
export const FETCH_USER_AGENT = "hi-gateway-fetch/1.0 (server tool)";

const FETCH_HEADERS: Record<string, string> = {
  "user-agent": FETCH_USER_AGENT,
  accept:
    "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/pdf;q=0.8,*/*;q=0.1",
  "accept-encoding": "gzip, deflate, br",
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** A connect attempt never waits longer than this, even with more of the deadline left. */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

export type SafeFetchSettings = Pick<
  WebFetchSettings,
  "allowHttp" | "allowedPorts" | "maxBytes" | "timeoutMs" | "maxRedirects" | "unsafeAllowLoopbackForTests"
>;

/** Replaceable network pieces, for tests: stub DNS answers and a connect tripwire. */
export interface FetchNetwork {
  resolve?: HostResolver;
  openSocket?: SocketOpener;
}

export interface SafeFetchOptions {
  settings: SafeFetchSettings;
  /** Aborting it abandons the fetch; `fetchSafely` then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Asked once the final response's headers are in, before its body is read; `false` ends the fetch
   * with `unsupported_type` without downloading the body.
   */
  acceptContentType?: (contentType: ContentType) => boolean;
  network?: FetchNetwork;
}

export interface SafeFetchResponse {
  ok: true;
  /** The URL the body came from (after redirects, without fragment). */
  url: string;
  status: number;
  contentType: ContentType;
  /** The decoded (decompressed) body. */
  body: Buffer;
  redirects: number;
  durationMs: number;
}

export type SafeFetchResult = SafeFetchResponse | (FetchFailure & { durationMs: number });

export async function fetchSafely(input: string, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const started = performance.now();
  const { settings } = options;
  const elapsed = () => Math.round(performance.now() - started);
  const finish = (failure: FetchFailure) => Object.assign({ ...failure }, { durationMs: elapsed() });
  options.signal?.throwIfAborted();

  const policy: UrlPolicy = {
    allowHttp: settings.allowHttp,
    allowedPorts: settings.allowedPorts,
    allowLoopback: settings.unsafeAllowLoopbackForTests,
  };
  const first = checkFetchUrl(input, policy);
  if (!first.ok) return finish(first);

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error("web fetch deadline")), settings.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const agent = new Agent({
    connect: createPinnedConnector({
      policy,
      resolve: options.network?.resolve ?? resolveHostAddresses,
      openSocket: options.network?.openSocket ?? openSocketWithUndici,
      signal,
      connectTimeoutMs: Math.min(settings.timeoutMs, MAX_CONNECT_TIMEOUT_MS),
    }),
  });

  let url = first.url;
  // undici's request() never follows redirects: they are followed here, one checked hop at a time.
  try {
    for (let redirects = 0; ; redirects += 1) {
      const remaining = Math.max(1, settings.timeoutMs - elapsed());
      const response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: FETCH_HEADERS,
        signal,
        reset: true,
        headersTimeout: remaining,
        bodyTimeout: remaining,
      });
      const status = response.statusCode;
      if (REDIRECT_STATUSES.has(status)) {
        discardBody(response.body);
        const location = headerValue(response.headers, "location");
        if (location === undefined) {
          return finish(
            fetchFailure("http_status", `Failed: HTTP ${status} redirect without a Location.`, {
              url: url.href,
              status,
            }),
          );
        }
        if (redirects >= settings.maxRedirects) {
          return finish(
            fetchFailure("too_many_redirects", `Failed: more than ${settings.maxRedirects} redirects.`, {
              url: url.href,
            }),
          );
        }
        const next = checkFetchUrl(location, policy, url);
        if (!next.ok) return finish(next);
        url = next.url;
        continue;
      }
      if (status < 200 || status > 299) {
        discardBody(response.body);
        return finish(
          fetchFailure("http_status", `Failed: the server answered HTTP ${status}.`, {
            url: url.href,
            status,
          }),
        );
      }
      return await readResponse(response, url, redirects, options, elapsed, finish);
    }
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return finish(describeNetworkError(error, url, deadline.signal.aborted, settings.timeoutMs));
  } finally {
    clearTimeout(timer);
    await agent.destroy().catch(() => undefined);
  }
}

async function readResponse(
  response: Dispatcher.ResponseData,
  url: URL,
  redirects: number,
  options: SafeFetchOptions,
  elapsed: () => number,
  finish: (failure: FetchFailure) => FetchFailure & { durationMs: number },
): Promise<SafeFetchResult> {
  const { maxBytes } = options.settings;
  const contentType = parseContentType(response.headers["content-type"]);
  if (options.acceptContentType && !options.acceptContentType(contentType)) {
    discardBody(response.body);
    const shown = contentType.mediaType ?? "unknown";
    return finish(
      fetchFailure("unsupported_type", `Failed: content of type ${shown} is not supported.`, {
        url: url.href,
        contentType: shown,
      }),
    );
  }
  const tooLarge = () =>
    finish(
      fetchFailure("too_large", `Failed: the page is larger than ${maxBytes} bytes.`, { url: url.href }),
    );
  const declared = Number(headerValue(response.headers, "content-length"));
  const encoding = headerValue(response.headers, "content-encoding");
  // A declared length counts wire bytes; with no encoding those are the body's bytes.
  if (Number.isFinite(declared) && declared > maxBytes) {
    discardBody(response.body);
    return tooLarge();
  }
  const body = await readCappedBody(response.body as Readable, encoding, maxBytes);
  if (!body.ok) {
    if (body.reason === "too_large") return tooLarge();
    return finish(
      fetchFailure(
        "bad_response",
        `Failed: the page's content encoding (${body.encoding}) could not be decoded.`,
        {
          url: url.href,
        },
      ),
    );
  }
  return {
    ok: true,
    url: url.href,
    status: response.statusCode,
    contentType,
    body: body.bytes,
    redirects,
    durationMs: elapsed(),
  };
}

function describeNetworkError(
  error: unknown,
  url: URL,
  deadlinePassed: boolean,
  timeoutMs: number,
): FetchFailure {
  const host = url.hostname;
  if (deadlinePassed || isUndiciTimeout(error)) {
    return fetchFailure("timeout", timeoutMessage(timeoutMs), { url: url.href });
  }
  if (error instanceof BlockedDestinationError) {
    return fetchFailure("blocked_address", refusedAddressMessage(host), {
      url: url.href,
      detail: error.detail,
    });
  }
  if (error instanceof HostResolutionError) {
    return fetchFailure("dns_failure", `Failed: the host name ${host} could not be resolved.`, {
      url: url.href,
      detail: error.code,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  return fetchFailure("unreachable", `Failed: could not get a complete answer from ${host}.`, {
    url: url.href,
    detail: typeof code === "string" ? code : (error as Error | null)?.name,
  });
}

function isUndiciTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT";
}

function headerValue(headers: Dispatcher.ResponseData["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
