/**
 * One web_fetch call: fetch the URL safely, then make text of it. HTML becomes markdown of the main
 * content (in the conversion pool's workers, its size and shape bounded first), plain text and
 * JSON pass through, a PDF comes back as bytes for the pdf tool, any other type is refused before
 * its body is downloaded. The text is capped at the call's token budget. Every page problem is a
 * {@link WebFetchFailure}; only the caller's abort rejects (with `signal.reason`).
 */

import type { WebFetchSettings } from "../../config/server-tools/web-fetch-config.js";
import { type ContentKind, type ContentType, classifyMediaType, sniffContentKind } from "./content-type.js";
import { decodeText } from "./decode-text.js";
import { type FetchFailureReason, timeoutMessage } from "./fetch-failure.js";
import { type FetchNetwork, fetchSafely } from "./fetch-safely.js";
import { getSharedHtmlConverter, type HtmlConversion, type HtmlConverter } from "./html-conversion-pool.js";
import { truncateToTokenBudget } from "./truncate-to-token-budget.js";

export interface WebFetchInput {
  url: string;
  /** The caller's cap (e.g. an activation's `max_content_tokens`); the configured cap still applies. */
  maxContentTokens?: number;
}

export interface WebFetchContext {
  settings: WebFetchSettings;
  /** The request's abort signal. */
  signal?: AbortSignal;
  /** Default: the process-wide converter. */
  htmlConverter?: HtmlConverter;
  /** Whose fetch this is (the API key's id): the converter shares its workers out between owners. */
  owner?: string;
  /** Tests: stub DNS and a connect tripwire. */
  network?: FetchNetwork;
  /** Default: the system clock. */
  now?: () => Date;
}

export interface WebFetchSuccess {
  ok: true;
  /** The URL the model asked for. */
  url: string;
  /** The URL the content came from, after redirects. */
  finalUrl: string;
  status: number;
  kind: ContentKind;
  /** The media type as served (`text/html`), or as sniffed when the server named none. */
  contentType: string;
  title: string | null;
  /** Markdown (html), the text as served (text, json), or "" (pdf). */
  text: string;
  /** The document itself, for `kind: "pdf"`. */
  pdf?: { mediaType: "application/pdf"; data: Buffer };
  /** Body size after decompression. */
  bytesFetched: number;
  /** Whether `text` was cut at the token budget (it then ends with a note saying so). */
  truncated: boolean;
  redirects: number;
  durationMs: number;
  /** When the fetch started (ISO 8601). */
  retrievedAt: string;
}

export type WebFetchFailureReason =
  | FetchFailureReason
  /** The page was read but is too large or complex to convert to text within the bounds. */
  | "too_complex"
  /** The page was read but too many pages are waiting to be converted. */
  | "busy";

export interface WebFetchFailure {
  ok: false;
  url: string;
  /** The URL being fetched when it failed (normalised; a redirect target after redirects), when it parsed. */
  finalUrl?: string;
  reason: WebFetchFailureReason;
  /** For the model: one sentence, starting with "Refused:" or "Failed:". */
  message: string;
  status?: number;
  contentType?: string;
  /** For operators' logs only (which rule refused the destination, an error code). */
  detail?: string;
  /**
   * The page was downloaded, then the gateway's conversion bounds stopped it (`too_complex`,
   * `busy`): the work was done, so the call costs its price like a page that was read.
   */
  cut?: true;
  durationMs: number;
  retrievedAt: string;
}

export type WebFetchResult = WebFetchSuccess | WebFetchFailure;

const KIND_MEDIA_TYPES: Record<ContentKind, string> = {
  html: "text/html",
  text: "text/plain",
  json: "application/json",
  pdf: "application/pdf",
};

export async function executeWebFetch(
  input: WebFetchInput,
  context: WebFetchContext,
): Promise<WebFetchResult> {
  const { settings } = context;
  const retrievedAt = (context.now?.() ?? new Date()).toISOString();
  const maxTokens = Math.max(1, Math.min(settings.maxContentTokens, input.maxContentTokens ?? Infinity));
  const fetched = await fetchSafely(input.url, {
    settings,
    signal: context.signal,
    network: context.network,
    acceptContentType: (type: ContentType) => classifyMediaType(type.mediaType) !== undefined,
  });
  if (!fetched.ok) {
    const { ok: _ok, url: failedAt, ...failure } = fetched;
    return {
      ok: false,
      url: input.url,
      ...(failedAt === undefined ? {} : { finalUrl: failedAt }),
      ...failure,
      retrievedAt,
    };
  }
  const started = performance.now() - fetched.durationMs;
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (reason: WebFetchFailureReason, message: string, contentType?: string): WebFetchFailure => ({
    ok: false,
    url: input.url,
    finalUrl: fetched.url,
    reason,
    message,
    ...(contentType === undefined ? {} : { contentType }),
    durationMs: elapsed(),
    retrievedAt,
  });

  const declared = classifyMediaType(fetched.contentType.mediaType);
  const kind = declared ?? sniffContentKind(fetched.body);
  if (kind === undefined) {
    const shown = fetched.contentType.mediaType ?? "unknown";
    return fail("unsupported_type", `Failed: content of type ${shown} is not supported.`, shown);
  }
  const base = {
    url: input.url,
    finalUrl: fetched.url,
    status: fetched.status,
    kind,
    contentType: declared ? fetched.contentType.mediaType! : KIND_MEDIA_TYPES[kind],
    bytesFetched: fetched.body.length,
    redirects: fetched.redirects,
    retrievedAt,
  };
  if (kind === "pdf") {
    const pdf = { mediaType: "application/pdf" as const, data: fetched.body };
    return { ok: true, ...base, title: null, text: "", pdf, truncated: false, durationMs: elapsed() };
  }

  let title: string | null = null;
  let text: string;
  let htmlCut = false;
  if (kind === "html") {
    const converter = context.htmlConverter ?? getSharedHtmlConverter();
    const remaining = settings.timeoutMs - elapsed();
    if (remaining <= 0) return fail("timeout", timeoutMessage(settings.timeoutMs));
    // HTML past the conversion's size bound is not read; what is read is converted.
    const { maxBytes } = settings.htmlConversion;
    const oversized = fetched.body.length > maxBytes;
    const converted = await converter.convert({
      html: oversized ? fetched.body.subarray(0, maxBytes) : fetched.body,
      charset: fetched.contentType.charset,
      pageUrl: fetched.url,
      owner: context.owner ?? "",
      timeoutMs: remaining,
      signal: context.signal,
    });
    context.signal?.throwIfAborted();
    if (!converted.ok) {
      const failure = conversionFailure(converted);
      const failed = fail(failure.reason, failure.message);
      if (failure.cut) failed.cut = true;
      return failed;
    }
    title = converted.title;
    text = converted.markdown;
    htmlCut = oversized || converted.cut;
  } else {
    text = decodeText(fetched.body, fetched.contentType.charset, false);
  }
  if (htmlCut) text = `${text}\n\n${pageCutNote(settings)}`;
  const capped = truncateToTokenBudget(text, maxTokens);
  const truncated = capped.truncated || htmlCut;
  return { ok: true, ...base, title, text: capped.text, truncated, durationMs: elapsed() };
}

/** Ends the text of a page whose HTML was cut at the conversion's bounds. */
function pageCutNote(settings: WebFetchSettings): string {
  const { maxBytes, maxElements } = settings.htmlConversion;
  return (
    `[Truncated: the page is larger than web_fetch converts to text (${maxBytes} bytes or ` +
    `${maxElements} elements of HTML); the rest was not read.]`
  );
}

/** A conversion that did not finish, for the model; `cut` when the call is billed all the same. */
function conversionFailure(converted: Extract<HtmlConversion, { ok: false }>): {
  reason: WebFetchFailureReason;
  message: string;
  cut: boolean;
} {
  switch (converted.reason) {
    case "timeout":
      return {
        reason: "too_complex",
        message: "Failed: the page is too large or too complex to convert to text in time.",
        cut: true,
      };
    case "failed":
      return {
        reason: "too_complex",
        message: "Failed: the page is too large or too complex to convert to text.",
        cut: true,
      };
    case "busy":
      return {
        reason: "busy",
        message:
          "Failed: too many pages fetched with this key are waiting to be converted to text; fetch fewer at once.",
        cut: true,
      };
    case "expired":
      return {
        reason: "busy",
        message:
          "Failed: the page waited too long to be converted to text; too many pages are being converted.",
        cut: true,
      };
    case "aborted":
    case "closed":
      return {
        reason: "bad_response",
        message: "Failed: the page could not be converted to text.",
        cut: false,
      };
  }
}
