/**
 * Canonical stream parts → chat-completions SSE:
 *
 *   role frame → content / reasoning / tool-call deltas (and hi.tool_event frames) → [reasoning_details]
 *   → [annotations] → finish_reason frame → usage-only chunk (always, whatever `stream_options` said)
 *   → `data: [DONE]`
 *
 * Rules the official SDK's ChatCompletionStream enforces: the first delta carries `role`; every tool
 * call opens with `id`, `type: "function"`, `function.name` and `arguments: ""`, later fragments
 * carry only `index` and `arguments`; the choice gets exactly one `finish_reason`.
 *
 * Choices made here:
 * - Tool-call `index` is assigned by this encoder, densely in order of first appearance, so the
 *   client's `tool_calls` array has no holes even if the canonical indexes skip calls the engine
 *   handled itself.
 * - `reasoning_details` (see reasoning-details.ts) go out once, as one chunk just before the finish
 *   frame, listing every reasoning block of the turn. The SDK's accumulator overwrites non-standard
 *   delta fields instead of appending them, so one complete chunk is the only form that survives it
 *   and also works for clients that append.
 * - Server tools: the format has no representation of a call or its result, so the text of every
 *   round streams as one message's content, and the citations into it go out once, as one
 *   `delta.annotations` chunk just before the finish frame (offsets into the whole content; the SDK's
 *   accumulator keeps only the last chunk carrying an unknown delta field, as for reasoning_details).
 *   Generated images go out the same way, the complete list in one `delta.images` chunk after the
 *   annotations (encode-chat-image.ts); a stream that fails after an image was made still sends it,
 *   before the error, since the image is paid for.
 * - `hi.tool_event` frames, only for calls that asked for them: `event: hi.tool_event` and a chunk
 *   envelope with this stream's id, `"choices": []` and the payload under `hi_tool_event`. The SDK's
 *   stream helper iterates every chunk's `choices` (a frame without them throws there) and copies
 *   top-level keys of any chunk with an `id` onto its snapshot (a different id would replace the
 *   completion's). Never a top-level `error` (the SDK throws APIError for it; failures are in the
 *   payload) nor `usage` (clients summing usage over chunks would count it twice).
 * - `usage`, `response-metadata`, `*-start`/`*-end` parts print nothing: usage goes out in finish()
 *   with the settled cost; an `error` part prints nothing because the engine reports it via fail().
 *
 * Hot path: the JSON prefix shared by every chunk is built once; per part only the delta is
 * serialised.
 */
import type {
  CanonicalStreamPart,
  FinishReason,
  ServerToolCall,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext, StreamEncoder } from "../ingress-format.js";
import { createToolEndedPayload, createToolStartedPayload } from "../shared/tool-event-payload.js";
import { type ChatImage, encodeChatImage } from "./encode-chat-image.js";
import { type ChatUrlCitationAnnotation, encodeUrlCitation } from "./encode-url-citation.js";
import { encodeChatUsage } from "./encode-usage.js";
import { mapFinishReason } from "./map-finish-reason.js";
import { type ChatReasoningDetail, encodeReasoningDetail } from "./reasoning-details.js";

export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";
export const DONE_FRAME = "data: [DONE]\n\n";
const TOOL_EVENT_LINE = "event: hi.tool_event\n";

interface ToolCallState {
  index: number;
  /**
   * The argument pieces sent so far, to complete them if the final `tool-call` part says more:
   * joined once, at the end of the call.
   */
  sent: string[];
}

export function createChatStreamEncoder(context: EncodeContext): StreamEncoder {
  return new ChatStreamEncoder(context);
}

class ChatStreamEncoder implements StreamEncoder {
  private readonly requestId: string;
  /** `data: {"id":…,"object":…,"created":…,"model":…,"choices":` */
  private readonly chunkPrefix: string;
  private readonly deltaPrefix: string;
  private roleSent = false;
  private finishSent = false;
  private closed = false;
  private readonly toolCalls = new Map<string, ToolCallState>();
  /** Each open reasoning block's text, in pieces joined once at its end. */
  private readonly reasoningTexts = new Map<string, string[]>();
  private readonly reasoningDetails: ChatReasoningDetail[] = [];
  private hasProviderState = false;
  /** UTF-16 units of content sent so far: where the next text block starts in the message. */
  private contentLength = 0;
  /** Where each open text block starts in the message's content, for its citations' offsets. */
  private readonly textBlockStarts = new Map<string, number>();
  private readonly annotations: ChatUrlCitationAnnotation[] = [];
  /** Generated images, sent once at the end (or before an error). */
  private images: ChatImage[] = [];

  constructor(context: EncodeContext) {
    this.requestId = context.requestId;
    this.chunkPrefix =
      `data: {"id":${JSON.stringify(`gen-${context.requestId}`)},"object":"chat.completion.chunk",` +
      `"created":${Math.trunc(context.createdAt)},"model":${JSON.stringify(context.model)},"choices":`;
    this.deltaPrefix = `${this.chunkPrefix}[{"index":0,"delta":`;
  }

  push(part: CanonicalStreamPart): string {
    if (this.closed) return "";
    const opening = this.roleSent ? "" : this.encodeRoleFrame(part.type);
    switch (part.type) {
      case "text-start":
        this.openTextBlock(part.id);
        return opening;
      case "text-delta":
        if (part.delta === "") return opening;
        this.openTextBlock(part.id);
        this.contentLength += part.delta.length;
        return `${opening}${this.encodeDelta(`{"content":${JSON.stringify(part.delta)}}`)}`;
      case "text-end":
        this.textBlockStarts.delete(part.id);
        return opening;
      case "citation":
        this.recordCitation(part.id, part.citation);
        return opening;
      case "server-tool-call":
        return opening + this.encodeToolStarted(part.call);
      case "server-tool-result":
        this.recordImage(part.result);
        return opening + this.encodeToolEnded(part.result);
      case "reasoning-delta":
        if (part.delta === "") return opening;
        this.appendReasoning(part.id, part.delta);
        return opening + this.encodeDelta(`{"reasoning":${JSON.stringify(part.delta)}}`);
      case "reasoning-end":
        this.recordReasoningBlock(part.id, part.providerState);
        return opening;
      case "tool-input-start":
        return opening + this.startToolCall(part.id, part.name);
      case "tool-input-delta":
        return opening + this.appendToolArguments(part.id, part.delta);
      case "tool-call":
        return opening + this.completeToolCall(part);
      case "finish":
        return opening + this.encodeFinish(part.reason);
      default:
        return opening;
    }
  }

  finish(settlement: Settlement): string {
    if (this.closed) return "";
    let frames = this.roleSent ? "" : this.encodeRoleFrame("finish");
    frames += this.encodeFinish(settlement.finishReason);
    this.closed = true;
    const usage = JSON.stringify(encodeChatUsage(settlement.usage, settlement.costMicroUsd));
    return `${frames}${this.chunkPrefix}[],"usage":${usage}}\n\n${DONE_FRAME}`;
  }

  fail(error: GatewayError, settlement?: Settlement): string {
    if (this.closed) return "";
    this.closed = true;
    // The usage chunk first, as it would close a finished stream: what the failed stream is billed.
    const usage = settlement
      ? `${this.chunkPrefix}[],"usage":${JSON.stringify(encodeChatUsage(settlement.usage, settlement.costMicroUsd))}}\n\n`
      : "";
    const images = this.encodeImages();
    // oai-node throws APIError for any frame whose JSON has a truthy top-level `error`.
    return `${images}${usage}data: ${JSON.stringify(createCommonErrorEnvelope(error, this.requestId))}\n\n`;
  }

  keepAlive(): string {
    return this.closed ? "" : KEEP_ALIVE_FRAME;
  }

  /** A turn that opens with a tool call gets `content: null`, as OpenAI sends it. */
  private encodeRoleFrame(firstPartType: CanonicalStreamPart["type"]): string {
    this.roleSent = true;
    const opensWithTool = firstPartType === "tool-input-start" || firstPartType === "tool-call";
    return this.encodeDelta(
      opensWithTool ? '{"role":"assistant","content":null}' : '{"role":"assistant","content":""}',
    );
  }

  private encodeDelta(deltaJson: string): string {
    return `${this.deltaPrefix}${deltaJson},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  private encodeFinish(reason: FinishReason): string {
    if (this.finishSent) return "";
    this.finishSent = true;
    let frames = "";
    if (this.hasProviderState) {
      frames = this.encodeDelta(`{"reasoning_details":${JSON.stringify(this.reasoningDetails)}}`);
    }
    if (this.annotations.length > 0) {
      frames += this.encodeDelta(`{"annotations":${JSON.stringify(this.annotations)}}`);
    }
    frames += this.encodeImages();
    return `${frames}${this.deltaPrefix}{},"logprobs":null,"finish_reason":"${mapFinishReason(reason)}"}]}\n\n`;
  }

  private openTextBlock(id: string): void {
    if (!this.textBlockStarts.has(id)) this.textBlockStarts.set(id, this.contentLength);
  }

  private recordCitation(textId: string, citation: UrlCitation): void {
    const start = this.textBlockStarts.get(textId);
    // A citation always follows a delta of its open block; one for any other block has no place.
    if (start === undefined) return;
    this.annotations.push(encodeUrlCitation(citation, start));
  }

  private recordImage(result: ServerToolResult): void {
    const image = encodeChatImage(result);
    if (image !== undefined) this.images.push(image);
  }

  /** The images made so far, in one delta (nothing when none); each goes out once. */
  private encodeImages(): string {
    if (this.images.length === 0) return "";
    const frame = this.encodeDelta(`{"images":${JSON.stringify(this.images)}}`);
    this.images = [];
    return frame;
  }

  private encodeToolStarted(call: ServerToolCall): string {
    return call.events ? this.encodeToolEvent(JSON.stringify(createToolStartedPayload(call, call.id))) : "";
  }

  private encodeToolEnded(result: ServerToolResult): string {
    if (!result.events) return "";
    return this.encodeToolEvent(JSON.stringify(createToolEndedPayload(result, result.callId)));
  }

  private encodeToolEvent(payloadJson: string): string {
    return `${TOOL_EVENT_LINE}${this.chunkPrefix}[],"hi_tool_event":${payloadJson}}\n\n`;
  }

  private startToolCall(id: string, name: string): string {
    if (this.toolCalls.has(id)) return "";
    const index = this.toolCalls.size;
    this.toolCalls.set(id, { index, sent: [] });
    const call = { index, id, type: "function", function: { name, arguments: "" } };
    return this.encodeDelta(`{"tool_calls":[${JSON.stringify(call)}]}`);
  }

  private appendToolArguments(id: string, fragment: string): string {
    const call = this.toolCalls.get(id);
    // A fragment for a call that never started has no name to open it with; adapters always start.
    if (call === undefined || fragment === "") return "";
    call.sent.push(fragment);
    return this.encodeDelta(
      `{"tool_calls":[{"index":${call.index},"function":{"arguments":${JSON.stringify(fragment)}}}]}`,
    );
  }

  private completeToolCall(part: Extract<CanonicalStreamPart, { type: "tool-call" }>): string {
    if (part.providerState !== undefined) {
      this.reasoningDetails.push(encodeReasoningDetail("", part.providerState, part.id));
      this.hasProviderState = true;
    }
    // Never streamed: open it now and send the arguments whole.
    let frames = this.toolCalls.has(part.id) ? "" : this.startToolCall(part.id, part.name);
    const sent = this.toolCalls.get(part.id)!.sent.join("");
    // Streamed arguments are normally the final ones; if the adapter completed them (e.g. `{}` for a
    // no-argument call that streamed nothing), send the rest so the client ends up byte-exact.
    if (part.arguments !== sent && part.arguments.startsWith(sent)) {
      frames += this.appendToolArguments(part.id, part.arguments.slice(sent.length));
    }
    return frames;
  }

  private appendReasoning(id: string, delta: string): void {
    const pieces = this.reasoningTexts.get(id);
    if (pieces === undefined) this.reasoningTexts.set(id, [delta]);
    else pieces.push(delta);
  }

  private recordReasoningBlock(id: string, providerState: Parameters<typeof encodeReasoningDetail>[1]): void {
    const text = this.reasoningTexts.get(id)?.join("") ?? "";
    this.reasoningTexts.delete(id);
    if (text === "" && providerState === undefined) return;
    this.reasoningDetails.push(encodeReasoningDetail(text, providerState));
    if (providerState !== undefined) this.hasProviderState = true;
  }
}
