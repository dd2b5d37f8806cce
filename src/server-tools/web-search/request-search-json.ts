/**
 * One HTTP call to a search backend, with one overall deadline (connect, headers and body together)
 * and a cap on the bytes read. Never throws: every way it can go wrong comes back as a classified
 * failure. Redirects are not followed (a 3xx is an `http_status` failure), so a key never travels
 * to a host other than the configured one.
 */
import type { Dispatcher } from "undici";

export interface SearchHttpRequest {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export type SearchHttpFailureReason = "timeout" | "network" | "http_status" | "bad_response" | "aborted";

export type SearchHttpResult =
  | { ok: true; status: number; json: unknown }
  | {
      ok: false;
      reason: SearchHttpFailureReason;
      message: string;
      status?: number;
      /** For `http_status`: the error body, parsed as JSON when it is JSON, else its text (bounded). */
      errorBody?: unknown;
      headers?: Record<string, string | string[] | undefined>;
    };

/** How much of an error body is read to explain the failure. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

export async function requestSearchJson(
  dispatcher: Dispatcher,
  request: SearchHttpRequest,
): Promise<SearchHttpResult> {
  const { signal } = request;
  if (signal?.aborted) return { ok: false, reason: "aborted", message: "The request was cancelled." };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("search deadline"));
  }, request.timeoutMs);
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", forwardAbort, { once: true });
  const fail = (error: unknown): SearchHttpResult => {
    if (timedOut) {
      return { ok: false, reason: "timeout", message: `No complete answer within ${request.timeoutMs} ms.` };
    }
    if (signal?.aborted) return { ok: false, reason: "aborted", message: "The request was cancelled." };
    return { ok: false, reason: "network", message: `Connection failed (${describeNetworkError(error)}).` };
  };
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        signal: controller.signal,
        // The overall timer above is the deadline; undici's own timers only back it up.
        headersTimeout: request.timeoutMs,
        bodyTimeout: request.timeoutMs,
      });
    } catch (error) {
      return fail(error);
    }
    const { statusCode: status, body } = response;
    const headers = response.headers as Record<string, string | string[] | undefined>;
    const success = status >= 200 && status < 300;
    const limit = success ? request.maxResponseBytes : MAX_ERROR_BODY_BYTES;
    const declared = Number(headers["content-length"]);
    if (success && Number.isFinite(declared) && declared > limit) {
      body.destroy();
      return tooLarge(limit);
    }
    let text: string;
    let truncated: boolean;
    try {
      ({ text, truncated } = await readBounded(body, limit));
    } catch (error) {
      return fail(error);
    }
    if (!success) {
      return {
        ok: false,
        reason: "http_status",
        status,
        message: `HTTP ${status}.`,
        errorBody: parseJsonOrText(text),
        headers,
      };
    }
    if (truncated) return tooLarge(limit);
    try {
      return { ok: true, status, json: JSON.parse(text) };
    } catch {
      return { ok: false, reason: "bad_response", message: "The answer is not JSON." };
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", forwardAbort);
  }
}

function tooLarge(limit: number): SearchHttpResult {
  return { ok: false, reason: "bad_response", message: `The answer is larger than ${limit} bytes.` };
}

/** Reads at most `limit` bytes; past it the rest is dropped and the socket destroyed. */
async function readBounded(
  body: Dispatcher.ResponseData["body"],
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      chunks.push(buffer.subarray(0, buffer.length - (size - limit)));
      body.destroy();
      return { text: Buffer.concat(chunks).toString("utf8"), truncated: true };
    }
    chunks.push(buffer);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated: false };
}

function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function describeNetworkError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && code !== "") return code;
  return typeof message === "string" && message !== "" ? message.slice(0, 120) : "unknown error";
}
