/**
 * The `demo` provider kind: answers made in the gateway, with no network and no provider account
 * (demo-reply.ts), so every format, streaming, metering and the console can be tried on a fresh
 * clone (`GATEWAY_CONFIG=config/demo.yaml npm start`, docs/providers.md). Its usage is the
 * gateway's own o200k estimate of the request and the answer, billed at the demo models' prices
 * like any other. Never part of the shipped catalog (config/gateway.yaml).
 */
import {
  type CanonicalResult,
  type CanonicalStreamPart,
  createEmptyUsage,
  type FinishReason,
} from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamInputRules } from "../../metering/bound-input-tokens.js";
import { estimateTextTokens, estimateUsage } from "../../metering/estimate-usage.js";
import type { ProviderAdapter, UpstreamCall } from "../provider-adapter.js";
import { buildDemoReply } from "./demo-reply.js";

/**
 * The demo bills the o200k estimate of the request's texts (estimateUsage) and nothing for images,
 * pages or tool prompts, so the o200k bound of the texts bounds it.
 */
const DEMO_INPUT_RULES: UpstreamInputRules = {
  tokenizer: "o200k",
  imageTokens: () => 0,
  pdfPageTokens: 0,
  toolPromptTokens: 0,
};

export function createDemoAdapter(): ProviderAdapter {
  return {
    kind: "demo",
    inputRules: DEMO_INPUT_RULES,
    async generate(call) {
      const parts = answer(call);
      const result: CanonicalResult = {
        upstreamId: `demo-${call.requestId}`,
        upstreamModel: call.upstreamModel,
        content: [],
        finishReason: "stop",
        usage: createEmptyUsage(),
      };
      for (const part of parts) {
        if (part.type === "text-delta") {
          const last = result.content.at(-1);
          if (last?.type === "text") last.text += part.delta;
          else result.content.push({ type: "text", text: part.delta });
        } else if (part.type === "tool-call") {
          result.content.push({ type: "tool-call", id: part.id, name: part.name, arguments: part.arguments });
        } else if (part.type === "usage") result.usage = part.usage;
        else if (part.type === "finish") result.finishReason = part.reason;
      }
      return result;
    },
    async *stream(call) {
      for (const part of answer(call)) {
        // One part per turn of the event loop, as parts of a real upstream arrive.
        await new Promise((resolve) => setImmediate(resolve));
        if (call.signal.aborted) throw new GatewayError("provider_timeout", "The demo answer was abandoned");
        yield part;
      }
    },
  };
}

/** The whole answer as canonical stream parts, cut at the call's output cap like a real model. */
function answer(call: UpstreamCall): CanonicalStreamPart[] {
  if (call.signal.aborted) throw new GatewayError("provider_timeout", "The demo answer was abandoned");
  const reply = buildDemoReply(call.request, call.upstreamModel);
  const parts: CanonicalStreamPart[] = [
    { type: "response-metadata", upstreamId: `demo-${call.requestId}`, upstreamModel: call.upstreamModel },
  ];
  let delivered = "";
  let reason: FinishReason = "stop";
  if (reply.type === "tool-call") {
    parts.push(
      { type: "tool-input-start", id: reply.id, index: 0, name: reply.name },
      { type: "tool-input-delta", id: reply.id, delta: reply.arguments },
      { type: "tool-input-end", id: reply.id },
      { type: "tool-call", id: reply.id, index: 0, name: reply.name, arguments: reply.arguments },
    );
    delivered = `${reply.name}${reply.arguments}`;
    reason = "tool-calls";
  } else {
    parts.push({ type: "text-start", id: "demo-text" });
    // Word by word, so a stream shows several deltas.
    for (const word of reply.text.match(/\S+\s*/g) ?? []) {
      if (estimateTextTokens(delivered + word) > call.maxOutputTokens) {
        reason = "length";
        break;
      }
      delivered += word;
      parts.push({ type: "text-delta", id: "demo-text", delta: word });
    }
    parts.push({ type: "text-end", id: "demo-text" });
  }
  parts.push({ type: "usage", usage: estimateUsage(call.request, delivered) }, { type: "finish", reason });
  return parts;
}
