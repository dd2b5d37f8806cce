/**
 * The most input tokens an upstream can bill for a request, which admission reserves
 * (docs/limits.md: "What a reservation bounds"). Linear in the request and bounded in time.
 *
 * - Text (messages, system, tool calls and results, reasoning, tool definitions, the response
 *   schema, fields passed through verbatim): where the upstream's tokenizer is o200k (OpenAI's
 *   own APIs), the o200k count as `estimate-usage.ts` bounds it; where the provider kind has a
 *   measured bound (Anthropic, Google), that bound (text-token-bounds.ts); elsewhere its UTF-8
 *   byte length, since a byte-level BPE tokenizer (and SentencePiece with byte fallback) never
 *   emits more tokens than the text has bytes, whatever its vocabulary.
 * - Opaque state sent back (signatures, encrypted reasoning): its byte length.
 * - Images and PDF pages: the provider kind's most per image and per page; text documents as
 *   text; media nobody can bound from the request (URLs the upstream fetches, audio, video,
 *   office files) have no bound of their own.
 * - Framing per message and per text, and the prompt an upstream adds for tools.
 * The sum is capped by the model's context length: an upstream refuses a longer prompt rather
 * than bill it.
 */
import type { CanonicalRequest, FilePart, ImagePart, MediaSource } from "../canonical/index.js";
import { countPdfPages } from "./count-pdf-pages.js";
import { countFramingTokens, forEachRequestText, TokenCounter } from "./estimate-usage.js";
import { readPassthroughText } from "./passthrough-text.js";
import { type ImageSize, readImageSourceSize } from "./read-image-size.js";
import { boundTextTokens, type TextTokenBound } from "./text-token-bounds.js";

/** What a provider kind bills for input, as far as a bound needs it. Each adapter declares its own. */
export interface UpstreamInputRules {
  /**
   * `o200k`: the upstream tokenizes text with o200k, so the local count bounds it closely.
   * `bytes`: its tokenizer is unknown here (or differs by model): one token per UTF-8 byte.
   * A `TextTokenBound`: the provider kind's bound from the o200k count and the characters.
   */
  tokenizer: "o200k" | "bytes" | TextTokenBound;
  /** Most tokens one image can be billed, from its size when known (Infinity: no bound). */
  imageTokens(size: ImageSize | undefined): number;
  /** Most tokens one PDF page can be billed: its text and its picture. */
  pdfPageTokens: number;
  /** Prompt the upstream adds once when the request defines tools. */
  toolPromptTokens: number;
  /**
   * UTF-8 bytes the adapter adds to the prompt when it rewrites the request for its upstream
   * (Gemini's inlined schema references). Throws `invalid_request` when the rewrite would be
   * refused anyway, so nothing is reserved for it.
   */
  measureAddedBytes?(request: CanonicalRequest): number;
}

/** Tokens around one tool definition beyond its JSON (names, tags of the upstream's rendering). */
const TOOL_FRAMING_TOKENS = 16;
/** Tokens around one document beyond its content (title, tags). */
const DOCUMENT_FRAMING_TOKENS = 32;

export function boundInputTokens(
  request: CanonicalRequest,
  rules: UpstreamInputRules,
  contextLength: number,
): number {
  const counter = new TokenCounter();
  const countText = selectTextCounter(rules.tokenizer, counter);
  let tokens = 0;
  let texts = 0;
  forEachRequestText(request, (text) => {
    tokens += countText(text);
    texts++;
  });
  tokens += countFramingTokens(texts, request.messages.length);
  if (request.tools.length > 0) {
    tokens += rules.toolPromptTokens + TOOL_FRAMING_TOKENS * request.tools.length;
  }
  if (request.responseFormat?.type === "json_schema") {
    tokens += countText(JSON.stringify(request.responseFormat.schema));
  }
  if (Object.keys(request.passthrough).length > 0)
    tokens += countText(readPassthroughText(request.passthrough));
  for (const message of request.messages) {
    for (const part of message.content) {
      switch (part.type) {
        case "image":
          tokens += boundImageTokens(part, rules);
          break;
        case "file":
          tokens += boundFileTokens(part, rules, countText);
          break;
        case "tool-result":
          for (const inner of part.content)
            if (inner.type === "image") tokens += boundImageTokens(inner, rules);
          break;
        case "tool-call":
        case "reasoning":
        case "native-tool":
          tokens += measureOpaqueState(part.providerState);
          break;
      }
    }
  }
  tokens += rules.measureAddedBytes?.(request) ?? 0;
  return Math.min(tokens, contextLength);
}

function selectTextCounter(
  tokenizer: UpstreamInputRules["tokenizer"],
  counter: TokenCounter,
): (text: string) => number {
  if (tokenizer === "o200k") return (text) => counter.bound(text);
  if (tokenizer === "bytes") return (text) => Buffer.byteLength(text, "utf8");
  return (text) => boundTextTokens(text, counter.bound(text), tokenizer);
}

function boundImageTokens(part: ImagePart, rules: UpstreamInputRules): number {
  // A PDF sent as an image (a `data:application/pdf` image URL) is sent upstream as a document.
  if (part.source.kind === "base64" && baseMediaType(part.source.mediaType) === "application/pdf") {
    return boundPdfTokens(part.source.data, rules);
  }
  return rules.imageTokens(readImageSourceSize(part.source));
}

function boundFileTokens(
  part: FilePart,
  rules: UpstreamInputRules,
  countText: (text: string) => number,
): number {
  const { source } = part;
  const framing = DOCUMENT_FRAMING_TOKENS + countText(`${part.filename ?? ""}${part.title ?? ""}`);
  // Fetched by the upstream (or by the gateway on its way there): its size is unknown here.
  if (source.kind === "url") return Number.POSITIVE_INFINITY;
  const mediaType = baseMediaType(source.mediaType);
  if (mediaType.startsWith("image/")) return framing + rules.imageTokens(readImageSourceSize(source));
  if (mediaType === "application/pdf") return framing + boundPdfTokens(source.data, rules);
  if (isTextMediaType(mediaType)) {
    if (rules.tokenizer === "bytes") return framing + measureBase64DecodedBytes(source);
    return framing + countText(Buffer.from(source.data, "base64").toString("utf8"));
  }
  // Audio, video, office files: what they are billed as follows from their content (duration,
  // extracted text), which no bound from the bytes covers.
  return Number.POSITIVE_INFINITY;
}

function boundPdfTokens(base64: string, rules: UpstreamInputRules): number {
  const pages = countPdfPages(Buffer.from(base64, "base64"));
  return pages === undefined ? Number.POSITIVE_INFINITY : pages * rules.pdfPageTokens;
}

/** Decoded size of base64 data, never below it (padding and stray characters only shrink it). */
function measureBase64DecodedBytes(source: Extract<MediaSource, { kind: "base64" }>): number {
  return Math.ceil((source.data.length * 3) / 4);
}

/**
 * Opaque state is billed as what it stands for (reasoning, a provider's own tool records, whose
 * encrypted results it reads again); its length in characters bounds that.
 */
function measureOpaqueState(
  state:
    | { signature?: string; redactedData?: string; encryptedContent?: string; nativeBlock?: string }
    | undefined,
): number {
  if (state === undefined) return 0;
  return (
    (state.signature?.length ?? 0) +
    (state.redactedData?.length ?? 0) +
    (state.encryptedContent?.length ?? 0) +
    (state.nativeBlock?.length ?? 0)
  );
}

/** Media types an upstream reads as text: text/*, JSON, XML, YAML, JavaScript and their `+json`/`+xml` kin. */
function isTextMediaType(mediaType: string): boolean {
  if (mediaType.startsWith("text/")) return true;
  if (!mediaType.startsWith("application/")) return false;
  const subtype = mediaType.slice("application/".length);
  return (
    subtype === "json" ||
    subtype === "xml" ||
    subtype === "javascript" ||
    subtype === "x-javascript" ||
    subtype === "yaml" ||
    subtype === "x-yaml" ||
    subtype === "x-ndjson" ||
    subtype === "csv" ||
    subtype.endsWith("+json") ||
    subtype.endsWith("+xml")
  );
}

function baseMediaType(mediaType: string): string {
  return mediaType.split(";")[0]!.trim().toLowerCase();
}
