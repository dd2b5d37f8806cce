/**
 * Gemini `GenerateContentResponse` chunks → canonical stream parts. One parser for both paths: a
 * stream is many chunks, a non-streamed body is one (each `data:` frame is a
 * complete response holding only the new parts).
 *
 * Per part of candidate 0 (the gateway never asks for more candidates):
 * - `thought: true` → reasoning deltas; text → text deltas; blocks open and close as the kind
 *   changes, so they never overlap.
 * - `functionCall` arrives whole: the open block closes, then tool-input-start, one delta with the
 *   arguments, tool-input-end and tool-call, with a fresh id and the next `index`. Every part is its
 *   own call, even three calls to one tool in three chunks.
 * - `thoughtSignature` becomes `providerState {providerKind: "google", upstreamModel,
 *   signature}` on the part it rode on: the tool call; the reasoning block it ends (a thought part);
 *   or, for visible text, an empty reasoning block emitted right AFTER the text block it rode on,
 *   when that block ends. A signature never splits a text: a stream may sign any of the text's
 *   chunks (often a trailing empty one, Gemini 3), a non-streamed body signs its one text part, and
 *   both come out as one text block followed by the signature. An empty signed text part outside a
 *   text block becomes an empty reasoning block where it stood; no empty text delta is emitted.
 *   `convert-contents.ts` reverses this.
 * - With native tools (read-grounding.ts): the last non-empty `groundingMetadata` and
 *   `urlContextMetadata` are kept; at the end the open text block gets the citations of its spans
 *   just before its `text-end`, and the searches and page reads follow as server-tool calls with
 *   their results (Gemini reports them only once the answer is written).
 * - `usageMetadata` is cumulative: the last one wins; `finishReason` arrives on the last chunk. The
 *   usage known at the first content goes out with it (a partial count), the last one at the end.
 * `response-metadata` is emitted just before the first content part, so a failure before any
 * content can still be thrown as a plain error (and retried).
 */
import type {
  CanonicalStreamPart,
  CanonicalUsage,
  NativeServerToolId,
  OpaqueReasoningState,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { createSequentialBlocks } from "../shared/block-tracker.js";
import { classifyStreamErrorFrame } from "../shared/classify-upstream-error.js";
import { isRecord, readRecords } from "../shared/read-wire-values.js";
import { createToolCallId } from "./create-tool-call-id.js";
import { GOOGLE_PROVIDER_KIND } from "./google-provider-kind.js";
import { mapFinishReason } from "./map-finish-reason.js";
import { mapUsage } from "./map-usage.js";
import { hasMetadata, readSearchCalls, readSupportCitations, readUrlContextCalls } from "./read-grounding.js";
import type { GeminiCandidateWire, GeminiPartWire, GenerateContentResponseWire } from "./wire-types.js";

/** The longest answer whose grounding is turned into citations (offsets need the text itself). */
const MAX_GROUNDED_TEXT_CHARS = 2_000_000;

export interface ChunkParserOptions {
  /** The model the request named; signatures are bound to it (isStateForUpstream). */
  upstreamModel: string;
  /** The tools Gemini was asked to run itself; their records become server-tool parts. */
  nativeTools?: ReadonlySet<NativeServerToolId>;
}

export interface ChunkParser {
  /** Folds one response chunk in; returns the parts it completes. Throws for error / blocked chunks. */
  acceptChunk(chunk: GenerateContentResponseWire): CanonicalStreamPart[];
  /**
   * Closes open blocks and ends with `usage` (when known) and `finish`. Without any finishReason it
   * throws `provider_unavailable` (the upstream stopped early), unless `requireFinishReason` is false
   * (a complete JSON body), which then finishes as `other`.
   */
  finish(options?: { requireFinishReason?: boolean }): CanonicalStreamPart[];
}

export function createChunkParser(options: ChunkParserOptions): ChunkParser {
  let upstreamId: string | undefined;
  let upstreamModel: string | undefined;
  let metadataSent = false;
  /** Signatures that rode on the open text block's parts: emitted when the block ends. */
  let textSignatures: string[] = [];
  const blocks = createSequentialBlocks({
    afterTextEnd(parts) {
      const signatures = textSignatures;
      textSignatures = [];
      for (const signature of signatures) emitSignatureCarrier(parts, signature);
    },
  });
  let toolCount = 0;
  let rawFinishReason: string | undefined;
  let usage: CanonicalUsage | undefined;
  const nativeTools = options.nativeTools ?? new Set<NativeServerToolId>();
  /**
   * The answer's visible text so far (in pieces, joined once at the end), its length, and where the
   * open text block starts in it (UTF-16).
   */
  let answerPieces: string[] = [];
  let answerLength = 0;
  let answerTextDropped = false;
  let textBlockStart = 0;
  let grounding: Record<string, unknown> | undefined;
  let urlContext: Record<string, unknown> | undefined;

  const toState = (signature: string): OpaqueReasoningState => ({
    providerKind: GOOGLE_PROVIDER_KIND,
    upstreamModel: options.upstreamModel,
    signature,
  });

  /** An empty reasoning block that only carries a signature (of the text before it, or on its own). */
  function emitSignatureCarrier(parts: CanonicalStreamPart[], signature: string): void {
    blocks.closeReasoning(parts);
    blocks.openReasoning(parts);
    blocks.closeReasoning(parts, toState(signature));
  }

  function acceptPart(parts: CanonicalStreamPart[], part: GeminiPartWire): void {
    const signature =
      typeof part.thoughtSignature === "string" && part.thoughtSignature !== ""
        ? part.thoughtSignature
        : undefined;
    if (part.functionCall !== undefined && part.functionCall !== null) {
      acceptFunctionCall(parts, part.functionCall, signature);
      return;
    }
    if (typeof part.text !== "string") return; // inline images, executable code…: not in the canonical model
    if (part.thought === true) {
      blocks.appendReasoning(parts, part.text);
      if (signature === undefined) return;
      if (blocks.reasoningOpen) blocks.closeReasoning(parts, toState(signature));
      else emitSignatureCarrier(parts, signature);
      return;
    }
    if (nativeTools.size > 0 && part.text !== "" && !answerTextDropped) {
      if (!blocks.textOpen) textBlockStart = answerLength;
      answerPieces.push(part.text);
      answerLength += part.text.length;
      // An upstream that ignores its output cap would make this grow without end: past the bound
      // the answer is not kept, and its grounding gives no citations.
      if (answerLength > MAX_GROUNDED_TEXT_CHARS) {
        answerPieces = [];
        answerTextDropped = true;
      }
    }
    blocks.appendText(parts, part.text);
    if (signature === undefined) return;
    if (blocks.textOpen) textSignatures.push(signature);
    else emitSignatureCarrier(parts, signature);
  }

  function acceptFunctionCall(
    parts: CanonicalStreamPart[],
    call: NonNullable<GeminiPartWire["functionCall"]>,
    signature: string | undefined,
  ): void {
    // Vertex can stream arguments in pieces when asked to; this adapter never asks, and guessing
    // at half a call would hand the caller wrong arguments.
    if (call.partialArgs !== undefined || call.willContinue === true) {
      throw new GatewayError(
        "provider_unavailable",
        "The upstream stream sent partial function-call arguments",
      );
    }
    if (typeof call.name !== "string" || call.name === "") {
      throw new GatewayError("provider_unavailable", "The upstream sent a function call without a name");
    }
    blocks.closeText(parts);
    blocks.closeReasoning(parts);
    const id = createToolCallId();
    const index = toolCount++;
    const args = JSON.stringify(isRecord(call.args) ? call.args : {});
    parts.push(
      { type: "tool-input-start", id, index, name: call.name },
      { type: "tool-input-delta", id, delta: args },
      { type: "tool-input-end", id },
      {
        type: "tool-call",
        id,
        index,
        name: call.name,
        arguments: args,
        ...(signature === undefined ? {} : { providerState: toState(signature) }),
      },
    );
  }

  function withMetadata(parts: CanonicalStreamPart[]): CanonicalStreamPart[] {
    if (metadataSent || parts.length === 0) return parts;
    metadataSent = true;
    const metadata: CanonicalStreamPart = { type: "response-metadata", upstreamId, upstreamModel };
    // The usage known so far (the prompt's count) goes out with the first content, so a stream
    // that ends early is billed the prompt the upstream reported; later counts come at the end.
    if (usage === undefined || parts.some((part) => part.type === "usage")) return [metadata, ...parts];
    return [metadata, { type: "usage", usage }, ...parts];
  }

  return {
    acceptChunk(chunk) {
      if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamErrorFrame(chunk);
      if (upstreamId === undefined && typeof chunk.responseId === "string" && chunk.responseId !== "") {
        upstreamId = chunk.responseId;
      }
      if (
        upstreamModel === undefined &&
        typeof chunk.modelVersion === "string" &&
        chunk.modelVersion !== ""
      ) {
        upstreamModel = chunk.modelVersion;
      }
      if (isRecord(chunk.usageMetadata)) usage = mapUsage(chunk.usageMetadata);

      const candidates = readRecords<GeminiCandidateWire>(chunk.candidates);
      const candidate = candidates.find((item) => (item.index ?? 0) === 0) ?? candidates[0];
      if (candidate === undefined) {
        const blockReason = chunk.promptFeedback?.blockReason;
        if (typeof blockReason === "string" && blockReason !== "") {
          throw new GatewayError(
            "content_filter",
            `The upstream provider blocked the prompt (${blockReason})`,
          );
        }
        return [];
      }
      const parts: CanonicalStreamPart[] = [];
      for (const part of readRecords<GeminiPartWire>(candidate.content?.parts)) acceptPart(parts, part);
      if (nativeTools.size > 0) {
        if (hasMetadata(candidate.groundingMetadata)) grounding = candidate.groundingMetadata;
        if (hasMetadata(candidate.urlContextMetadata)) urlContext = candidate.urlContextMetadata;
      }
      if (typeof candidate.finishReason === "string" && candidate.finishReason !== "") {
        rawFinishReason = candidate.finishReason;
      }
      return withMetadata(parts);
    },

    finish(finishOptions = {}) {
      if (rawFinishReason === undefined && finishOptions.requireFinishReason !== false) {
        throw new GatewayError("provider_unavailable", "upstream stream ended early");
      }
      const parts: CanonicalStreamPart[] = [];
      const textId = blocks.textId;
      if (grounding !== undefined && textId !== undefined && !answerTextDropped) {
        const answerText = answerPieces.join("");
        for (const citation of readSupportCitations(grounding, answerText, textBlockStart)) {
          parts.push({ type: "citation", id: textId, citation });
        }
      }
      blocks.closeText(parts);
      blocks.closeReasoning(parts);
      const calls = [
        ...(grounding !== undefined && nativeTools.has("web_search") ? readSearchCalls(grounding) : []),
        ...(urlContext !== undefined && nativeTools.has("web_fetch") ? readUrlContextCalls(urlContext) : []),
      ];
      for (const { call, result } of calls) {
        parts.push({ type: "server-tool-call", call }, { type: "server-tool-result", result });
      }
      if (usage !== undefined) parts.push({ type: "usage", usage });
      parts.push({
        type: "finish",
        reason: mapFinishReason(rawFinishReason, { hasToolCalls: toolCount > 0 }),
        ...(rawFinishReason === undefined ? {} : { rawReason: rawFinishReason }),
      });
      return withMetadata(parts);
    },
  };
}
