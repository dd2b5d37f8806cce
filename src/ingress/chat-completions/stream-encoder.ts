/**
 * Canonical stream parts → chat-completions SSE:
 *
 *   role frame → content / reasoning / tool-call deltas → [reasoning_details] → finish_reason frame
 *   → usage-only chunk (always, whatever `stream_options` said) → `data: [DONE]`
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
 * - `usage`, `response-metadata`, `*-start`/`*-end` parts print nothing: usage goes out in finish()
 *   with the settled cost; an `error` part prints nothing because the engine reports it via fail().
 *
 * Hot path: the JSON prefix shared by every chunk is built once; per part only the delta is
 * serialised.
 */
import type { CanonicalStreamPart, FinishReason } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext, StreamEncoder } from "../ingress-format.js";
import { encodeChatUsage } from "./encode-usage.js";
import { mapFinishReason } from "./map-finish-reason.js";
import { type ChatReasoningDetail, encodeReasoningDetail } from "./reasoning-details.js";

export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";
export const DONE_FRAME = "data: [DONE]\n\n";

interface ToolCallState {
  index: number;
  /** Arguments sent so far, to complete them if the final `tool-call` part says more. */
  arguments: string;
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
  private readonly reasoningTexts = new Map<string, string>();
  private readonly reasoningDetails: ChatReasoningDetail[] = [];
  private hasProviderState = false;

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
      case "text-delta":
        return part.delta === ""
          ? opening
          : `${opening}${this.encodeDelta(`{"content":${JSON.stringify(part.delta)}}`)}`;
      case "reasoning-delta":
        if (part.delta === "") return opening;
        this.reasoningTexts.set(part.id, (this.reasoningTexts.get(part.id) ?? "") + part.delta);
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
    // oai-node throws APIError for any frame whose JSON has a truthy top-level `error`.
    return `${usage}data: ${JSON.stringify(createCommonErrorEnvelope(error, this.requestId))}\n\n`;
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
    return `${frames}${this.deltaPrefix}{},"logprobs":null,"finish_reason":"${mapFinishReason(reason)}"}]}\n\n`;
  }

  private startToolCall(id: string, name: string): string {
    if (this.toolCalls.has(id)) return "";
    const index = this.toolCalls.size;
    this.toolCalls.set(id, { index, arguments: "" });
    const call = { index, id, type: "function", function: { name, arguments: "" } };
    return this.encodeDelta(`{"tool_calls":[${JSON.stringify(call)}]}`);
  }

  private appendToolArguments(id: string, fragment: string): string {
    const call = this.toolCalls.get(id);
    // A fragment for a call that never started has no name to open it with; adapters always start.
    if (call === undefined || fragment === "") return "";
    call.arguments += fragment;
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
    const call = this.toolCalls.get(part.id)!;
    // Streamed arguments are normally the final ones; if the adapter completed them (e.g. `{}` for a
    // no-argument call that streamed nothing), send the rest so the client ends up byte-exact.
    if (part.arguments !== call.arguments && part.arguments.startsWith(call.arguments)) {
      frames += this.appendToolArguments(part.id, part.arguments.slice(call.arguments.length));
    }
    return frames;
  }

  private recordReasoningBlock(id: string, providerState: Parameters<typeof encodeReasoningDetail>[1]): void {
    const text = this.reasoningTexts.get(id) ?? "";
    this.reasoningTexts.delete(id);
    if (text === "" && providerState === undefined) return;
    this.reasoningDetails.push(encodeReasoningDetail(text, providerState));
    if (providerState !== undefined) this.hasProviderState = true;
  }
}
