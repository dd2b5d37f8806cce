/**
 * web_fetch for one request. The activation may lower the text cap (`max_content_tokens`) and
 * restrict the destinations to domains (`allowed_domains` / `blocked_domains`, as Anthropic's
 * web_fetch tool takes them); every fetch goes through the safe fetcher, whose address rules no
 * activation can loosen. A PDF it fetches is read by the pdf tool's reader (the request's page and
 * byte caps, the same cache) and the model gets its text with page markers; its pages are billed
 * on the pdf line. A PDF that cannot be read is a failed call whose result says why.
 */
import type { ServerToolActivation, ServerToolErrorCode } from "../../canonical/index.js";
import type { ServerToolExecution } from "../../engine/ports.js";
import { filenameFromUrl } from "../documents/index.js";
import type { PdfFailureReason, PdfRequestOptions, PdfTextExtractor } from "../pdf/index.js";
import {
  executeWebFetch,
  type FetchNetwork,
  formatWebFetchResultForModel,
  type HtmlConverter,
  readWebFetchArguments,
  truncateToTokenBudget,
  WEB_FETCH_TOOL_DEFINITION,
  type WebFetchFailureReason,
  type WebFetchSettings,
  type WebFetchSuccess,
} from "../web-fetch/index.js";
import { isUrlPermitted, readDomainList } from "../web-search/index.js";
import { createActivationError, type PreparedTool, readArgumentsObject } from "./prepared-tool.js";

/** The URL, title and type lines above the page text. */
const RESULT_OVERHEAD_TOKENS = 200;

const FAILURE_CODES: Record<WebFetchFailureReason, ServerToolErrorCode> = {
  bad_url: "invalid_input",
  bad_scheme: "url_not_allowed",
  blocked_port: "url_not_allowed",
  blocked_address: "url_not_allowed",
  dns_failure: "url_not_accessible",
  unreachable: "url_not_accessible",
  too_many_redirects: "url_not_accessible",
  too_large: "url_not_accessible",
  timeout: "unavailable",
  http_status: "url_not_accessible",
  unsupported_type: "unsupported_content_type",
  bad_response: "url_not_accessible",
  too_complex: "unavailable",
  busy: "too_many_requests",
};

const PDF_FAILURE_CODES: Record<PdfFailureReason, ServerToolErrorCode> = {
  not_pdf: "unsupported_content_type",
  too_large: "url_not_accessible",
  encrypted: "unsupported_content_type",
  malformed: "unsupported_content_type",
  no_text_layer: "unsupported_content_type",
  timeout: "unavailable",
  too_complex: "unavailable",
  aborted: "unavailable",
  internal: "unavailable",
};

/** The gateway's HTML conversion pool, and whose fetches these are (its fairness unit). */
export interface WebFetchHtmlConversion {
  converter: HtmlConverter;
  owner: string;
}

/** The pdf tool's reader and the request's choices for it. */
export interface WebFetchPdfReader {
  extractor: PdfTextExtractor;
  options: PdfRequestOptions;
}

export function prepareWebFetchTool(
  activation: ServerToolActivation,
  settings: WebFetchSettings,
  network: FetchNetwork | undefined,
  pdf?: WebFetchPdfReader,
  html?: WebFetchHtmlConversion,
): PreparedTool {
  if (!settings.enabled) {
    throw createActivationError(
      activation,
      "The web_fetch server tool is turned off on this gateway (server_tools.web_fetch.enabled)",
    );
  }
  const options = readWebFetchActivation(activation);
  const maxContentTokens = Math.min(
    settings.maxContentTokens,
    options.maxContentTokens ?? Number.POSITIVE_INFINITY,
  );
  const domains = { allowed_domains: options.allowedDomains, blocked_domains: options.blockedDomains };
  const maxPdfCost =
    pdf === undefined
      ? 0
      : pdf.extractor.estimateMaxCostMicroUsd(undefined, { maxPages: pdf.options.maxPages });
  return {
    definition: WEB_FETCH_TOOL_DEFINITION,
    maxCallCostMicroUsd: settings.pricePerCallMicroUsd + maxPdfCost,
    maxResultTokens: maxContentTokens + RESULT_OVERHEAD_TOKENS,
    readInput: readArgumentsObject,
    async execute(argumentsJson, signal) {
      const args = readWebFetchArguments(argumentsJson);
      if (!args.ok) {
        return {
          error: { code: "invalid_input", message: args.message },
          costMicroUsd: 0,
          forModel: args.message,
        };
      }
      const refusal = checkDomains(args.url, domains.allowed_domains, domains.blocked_domains);
      if (refusal !== undefined) {
        return { error: { code: "url_not_allowed", message: refusal }, costMicroUsd: 0, forModel: refusal };
      }
      let result: Awaited<ReturnType<typeof executeWebFetch>>;
      try {
        result = await executeWebFetch(
          { url: args.url, maxContentTokens },
          { settings, signal, network, htmlConverter: html?.converter, owner: html?.owner },
        );
      } catch {
        const message = "Failed: the request was cancelled before the page was read.";
        return { error: { code: "unavailable", message }, costMicroUsd: 0, forModel: message };
      }
      if (!result.ok) {
        return {
          error: { code: FAILURE_CODES[result.reason], message: result.message },
          // A page the gateway read and then had to stop converting costs the call's price: the
          // fetch and the conversion ran. Any other failure costs nothing.
          costMicroUsd: result.cut ? settings.pricePerCallMicroUsd : 0,
          forModel: formatWebFetchResultForModel(result),
        };
      }
      let pdfMicroUsd = 0;
      if (result.kind === "pdf" && result.pdf !== undefined && pdf !== undefined) {
        const read = await readPdf(result, result.pdf.data, pdf, maxContentTokens, signal);
        if ("execution" in read) return read.execution;
        result = read.result;
        pdfMicroUsd = read.costMicroUsd;
      }
      const forModel = formatWebFetchResultForModel(result);
      const costMicroUsd = settings.pricePerCallMicroUsd + pdfMicroUsd;
      return {
        output: {
          kind: "fetch",
          url: result.url,
          finalUrl: result.finalUrl,
          title: result.title ?? new URL(result.finalUrl).host,
          retrievedAt: result.retrievedAt,
          contentType: result.contentType,
          bytes: result.bytesFetched,
          text: result.text,
          truncated: result.truncated,
        },
        costMicroUsd,
        ...(pdfMicroUsd === 0
          ? {}
          : { costsByTool: { web_fetch: settings.pricePerCallMicroUsd, pdf: pdfMicroUsd } }),
        forModel,
      };
    },
  };
}

/**
 * The activation's own options, however the tool runs (here or at the provider): the text cap it
 * asks for and its domain lists. Throws `invalid_request` naming a malformed option.
 */
export function readWebFetchActivation(activation: ServerToolActivation): {
  maxContentTokens?: number;
  allowedDomains: string[];
  blockedDomains: string[];
} {
  const parameters = activation.parameters ?? {};
  const requested = parameters.max_content_tokens;
  let maxContentTokens: number | undefined;
  if (requested !== undefined && requested !== null) {
    if (typeof requested !== "number" || !Number.isInteger(requested) || requested < 1) {
      throw createActivationError(
        activation,
        "max_content_tokens must be a positive integer",
        "max_content_tokens",
      );
    }
    maxContentTokens = requested;
  }
  const domains: Record<"allowed_domains" | "blocked_domains", string[]> = {
    allowed_domains: [],
    blocked_domains: [],
  };
  for (const field of ["allowed_domains", "blocked_domains"] as const) {
    const list = readDomainList(parameters[field]);
    if (typeof list === "string") throw createActivationError(activation, `${field} ${list}`, field);
    domains[field] = list;
  }
  const allowedDomains = domains.allowed_domains;
  const blockedDomains = domains.blocked_domains;
  return maxContentTokens === undefined
    ? { allowedDomains, blockedDomains }
    : { maxContentTokens, allowedDomains, blockedDomains };
}

/**
 * A fetched PDF's text, cut at the call's token budget; billed for the pages whose text survives
 * the cut. Or the failed call's execution when it cannot be read.
 */
async function readPdf(
  result: WebFetchSuccess,
  bytes: Buffer,
  pdf: WebFetchPdfReader,
  maxContentTokens: number,
  signal: AbortSignal,
): Promise<{ result: WebFetchSuccess; costMicroUsd: number } | { execution: ServerToolExecution }> {
  const read = await pdf.extractor.extractText(
    { bytes, filename: filenameFromUrl(result.finalUrl) },
    { signal, maxPages: pdf.options.maxPages, maxFileBytes: pdf.options.maxFileBytes },
  );
  if (!read.ok) {
    const message =
      read.failure.reason === "aborted"
        ? "Failed: the request was cancelled before the page was read."
        : `Failed: ${read.failure.message}`;
    return {
      execution: {
        error: { code: PDF_FAILURE_CODES[read.failure.reason], message },
        costMicroUsd: 0,
        forModel: `web_fetch of ${result.url}: ${message}`,
      },
    };
  }
  const capped = truncateToTokenBudget(read.text, maxContentTokens);
  const pagesShown = capped.truncated ? countPagesShown(capped.text, read.pagesIncluded) : read.pagesIncluded;
  const shown = { ...result };
  shown.text = capped.text;
  shown.truncated = capped.truncated || read.pagesCut || read.textCut;
  return {
    result: shown,
    costMicroUsd: pagesShown * pdf.extractor.settings.pricePerPageMicroUsd,
  };
}

/** Pages whose marker is in the cut text (the last marker's number), at most those read. */
function countPagesShown(text: string, pagesIncluded: number): number {
  let shown = 0;
  for (const match of text.matchAll(/^--- page (\d+) ---$/gm)) shown = Number(match[1]);
  return Math.min(shown, pagesIncluded);
}

/** A sentence for the model when the request's domain lists refuse the URL. */
function checkDomains(url: string, allowed: string[], blocked: string[]): string | undefined {
  if (allowed.length === 0 && blocked.length === 0) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // The fetcher refuses it with its own words.
  }
  if (isUrlPermitted(parsed, allowed, blocked)) return undefined;
  return `Refused: ${parsed.host} is not among the domains this request allows web_fetch to read.`;
}
