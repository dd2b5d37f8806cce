/**
 * The request's PDF file parts as each route reads them (engine/ports.ts `DocumentPreparer`): a
 * chat `file` part (`file_data` or `file_url`), a Responses `input_file`, a Messages `document`.
 *
 * - A route whose upstream reads PDFs gets the file as sent, unless the request chose the `text`
 *   engine. A file given by URL is fetched by the gateway (web_fetch's address rules, the PDF byte
 *   cap, a deadline) and sent inline, so no upstream fetches a URL the gateway did not check.
 * - Any other route gets the document's text (pdf/ `createPdfTextExtractor`, in worker threads,
 *   with its content-hash cache) as a text part: `<file name=… pages=…>` and a marker per page.
 * - A URL that is not a PDF stays a URL, as before.
 *
 * Each document is fetched and read at most once per request, whichever routes ask; the cache
 * spares the next request with the same bytes. A document that cannot be fetched or read is an
 * `invalid_request` naming its part. At most {@link MAX_DOCUMENTS_READ} documents are fetched or
 * read for one request, {@link CONCURRENT_READS} at a time.
 */
import type {
  CanonicalMessage,
  CanonicalRequest,
  FilePart,
  TextPart,
  UserContentPart,
} from "../../canonical/index.js";
import type { DocumentPreparer, DocumentSession, DocumentsForRoute } from "../../engine/ports.js";
import { GatewayError } from "../../errors/gateway-error.js";
import {
  maxFormattedPdfBytes,
  type PdfExtraction,
  type PdfRequestOptions,
  type PdfTextExtractor,
  shouldExtractPdfText,
  toPdfGatewayError,
} from "../pdf/index.js";
import { type FetchedFile, type FileFetchContext, fetchFileUrl, filenameFromUrl } from "./fetch-file-url.js";
import { readPdfActivation } from "./read-pdf-activation.js";

/** Documents one request may have fetched or read; more is refused naming the first one past it. */
export const MAX_DOCUMENTS_READ = 100;
/** Fetches and reads of one request running at once (the worker pool bounds parsing across requests). */
export const CONCURRENT_READS = 4;

export interface DocumentPreparerOptions extends FileFetchContext {
  extractor: PdfTextExtractor;
}

const PDF_MEDIA_TYPES = new Set(["application/pdf", "application/x-pdf"]);

export function createDocumentPreparer(options: DocumentPreparerOptions): DocumentPreparer {
  const { extractor } = options;
  return {
    prepare(request) {
      const choices = readPdfActivation(request, extractor.settings);
      const parts = collectDocumentParts(request);
      if (parts.length === 0) return undefined;
      return createSession(parts, choices, options);
    },
  };
}

/** What one route variant replaces: each document part by its file or its text. */
interface ReadDocuments {
  replacements: Map<FilePart, UserContentPart>;
  costMicroUsd: number;
}

function createSession(
  parts: FilePart[],
  choices: PdfRequestOptions,
  options: DocumentPreparerOptions,
): DocumentSession {
  const { extractor } = options;
  const inline = new Set(parts.filter((part) => part.source.kind === "base64"));
  const fetches = new Map<FilePart, Promise<FetchedFile>>();
  const texts = new Map<FilePart, Promise<PdfExtraction>>();
  const variants = new Map<boolean, Promise<ReadDocuments>>();

  const fetchOnce = (part: FilePart, url: string, signal: AbortSignal): Promise<FetchedFile> => {
    let fetched = fetches.get(part);
    if (fetched === undefined) {
      fetched = fetchFileUrl(url, choices.maxFileBytes, options, signal);
      fetches.set(part, fetched);
    }
    return fetched;
  };

  const readOnce = (part: FilePart, bytes: Buffer, filename: string | undefined, signal: AbortSignal) => {
    let read = texts.get(part);
    if (read === undefined) {
      read = extractor.extractText(
        { bytes, filename },
        { signal, maxPages: choices.maxPages, maxFileBytes: choices.maxFileBytes },
      );
      texts.set(part, read);
    }
    return read;
  };

  /** The part as a route reads it; undefined when it goes as it is. */
  async function readPart(
    part: FilePart,
    sendsText: boolean,
    signal: AbortSignal,
  ): Promise<{ replacement?: UserContentPart; costMicroUsd: number }> {
    const param = part.param ?? "messages";
    let bytes: Buffer;
    let filename = part.filename ?? part.title;
    if (part.source.kind === "url") {
      const fetched = await fetchOnce(part, part.source.url, signal);
      if (fetched.kind === "other") return { costMicroUsd: 0 };
      if (fetched.kind === "failed") {
        throw GatewayError.invalidRequest(`${param}: the file was not fetched. ${fetched.message}`, param);
      }
      bytes = fetched.bytes;
      filename ??= filenameFromUrl(fetched.finalUrl) ?? filenameFromUrl(part.source.url);
      if (!sendsText) {
        const file: FilePart = {
          type: "file",
          source: { kind: "base64", mediaType: "application/pdf", data: bytes.toString("base64") },
          filename: filename ?? "document.pdf",
        };
        if (part.title !== undefined) file.title = part.title;
        if (part.cacheControl !== undefined) file.cacheControl = part.cacheControl;
        return { replacement: file, costMicroUsd: 0 };
      }
    } else {
      if (!sendsText) return { costMicroUsd: 0 };
      bytes = Buffer.from(part.source.data, "base64");
    }
    const read = await readOnce(part, bytes, filename, signal);
    if (!read.ok) {
      if (read.failure.reason === "aborted") throw signal.reason ?? new Error("aborted");
      throw toPdfGatewayError(read.failure, param);
    }
    const text: TextPart = { type: "text", text: read.text };
    // A large document is what a prompt cache is for: its breakpoint stays on its text.
    if (part.cacheControl !== undefined) text.cacheControl = part.cacheControl;
    return { replacement: text, costMicroUsd: read.costMicroUsd };
  }

  async function readAll(sendsText: boolean, signal: AbortSignal): Promise<ReadDocuments> {
    // Inline PDFs a route reads itself need no work; everything else is fetched or read.
    const work = parts.filter((part) => sendsText || part.source.kind === "url");
    if (work.length > MAX_DOCUMENTS_READ) {
      const param = work[MAX_DOCUMENTS_READ].param ?? "messages";
      throw GatewayError.invalidRequest(
        `${param}: a request may carry at most ${MAX_DOCUMENTS_READ} PDF documents the gateway fetches or reads`,
        param,
      );
    }
    const results = await mapConcurrently(work, CONCURRENT_READS, (part) =>
      readPart(part, sendsText, signal),
    );
    const read: ReadDocuments = { replacements: new Map(), costMicroUsd: 0 };
    results.forEach((result, index) => {
      if (result.replacement !== undefined) read.replacements.set(work[index], result.replacement);
      read.costMicroUsd += result.costMicroUsd;
    });
    return read;
  }

  const estimateCost = (): number => {
    if (extractor.settings.pricePerPageMicroUsd === 0) return 0;
    let total = 0;
    for (const part of parts) {
      // The page count of inline bytes, else the page cap; an over-cap file is refused, costing nothing.
      const bytes = part.source.kind === "base64" ? Buffer.from(part.source.data, "base64") : undefined;
      if (bytes !== undefined && bytes.length > choices.maxFileBytes) continue;
      total += extractor.estimateMaxCostMicroUsd(bytes, { maxPages: choices.maxPages });
    }
    return total;
  };
  let maxCost: number | undefined;

  return {
    sendsText: (routeReadsPdf) => shouldExtractPdfText(choices.engine, routeReadsPdf),
    get maxCostMicroUsd() {
      maxCost ??= estimateCost();
      return maxCost;
    },
    maxTextTokens: inline.size * maxFormattedPdfBytes(choices.maxPages, extractor.settings.maxTextBytes),
    withoutDocuments: (request) =>
      replaceParts(request, (part) => (inline.has(part as FilePart) ? null : part)),
    async requestFor(request, routeReadsPdf, signal): Promise<DocumentsForRoute> {
      const sendsText = shouldExtractPdfText(choices.engine, routeReadsPdf);
      let variant = variants.get(sendsText);
      if (variant === undefined) {
        variant = readAll(sendsText, signal);
        variants.set(sendsText, variant);
      }
      const read = await variant;
      if (read.replacements.size === 0) return { request, costMicroUsd: read.costMicroUsd };
      return {
        request: replaceParts(request, (part) => read.replacements.get(part as FilePart) ?? part),
        costMicroUsd: read.costMicroUsd,
      };
    },
  };
}

/** File parts that are PDFs, or may be (a URL: what it serves decides). */
function collectDocumentParts(request: CanonicalRequest): FilePart[] {
  const parts: FilePart[] = [];
  for (const message of request.messages) {
    if (message.role !== "user") continue;
    for (const part of message.content) {
      if (part.type !== "file") continue;
      if (part.source.kind === "url" || PDF_MEDIA_TYPES.has(baseMediaType(part.source.mediaType))) {
        parts.push(part);
      }
    }
  }
  return parts;
}

/** The request with user parts mapped (null drops one); messages without a change are kept as they are. */
function replaceParts(
  request: CanonicalRequest,
  map: (part: UserContentPart) => UserContentPart | null,
): CanonicalRequest {
  let changed = false;
  const messages = request.messages.map((message): CanonicalMessage => {
    if (message.role !== "user") return message;
    let content: UserContentPart[] | undefined;
    message.content.forEach((part, index) => {
      const mapped = map(part);
      if (mapped === part && content === undefined) return;
      content ??= message.content.slice(0, index);
      if (mapped !== null) content.push(mapped);
    });
    if (content === undefined) return message;
    changed = true;
    const replaced = { ...message };
    replaced.content = content;
    return replaced;
  });
  if (!changed) return request;
  const replaced = { ...request };
  replaced.messages = messages;
  return replaced;
}

/** `run` over `items`, `limit` at a time, in order; after the first failure nothing new starts. */
async function mapConcurrently<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        results[index] = await run(items[index]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

function baseMediaType(mediaType: string): string {
  return mediaType.split(";")[0].trim().toLowerCase();
}
