/**
 * Canonical stream parts → CanonicalResult: the non-streamed result is a fold of the same parts,
 * so both paths share one mapping from Gemini parts.
 */
import {
  type CanonicalResult,
  type CanonicalStreamPart,
  createEmptyUsage,
  type ResultContent,
} from "../../canonical/index.js";
import { createGatewayErrorFromInfo } from "../../errors/gateway-error.js";

/** Throws the GatewayError of an `error` part. */
export function foldStreamParts(parts: Iterable<CanonicalStreamPart>): CanonicalResult {
  const result: CanonicalResult = { content: [], finishReason: "other", usage: createEmptyUsage() };
  const open = new Map<string, Extract<ResultContent, { type: "text" | "reasoning" }>>();
  for (const part of parts) {
    switch (part.type) {
      case "response-metadata":
        if (part.upstreamId !== undefined) result.upstreamId = part.upstreamId;
        if (part.upstreamModel !== undefined) result.upstreamModel = part.upstreamModel;
        break;
      case "text-start":
      case "reasoning-start": {
        const item: Extract<ResultContent, { type: "text" | "reasoning" }> = {
          type: part.type === "text-start" ? "text" : "reasoning",
          text: "",
        };
        open.set(part.id, item);
        result.content.push(item);
        break;
      }
      case "text-delta":
      case "reasoning-delta": {
        const item = open.get(part.id);
        if (item !== undefined) item.text += part.delta;
        break;
      }
      case "reasoning-end": {
        const item = open.get(part.id);
        if (item?.type === "reasoning" && part.providerState !== undefined)
          item.providerState = part.providerState;
        open.delete(part.id);
        break;
      }
      case "text-end":
        open.delete(part.id);
        break;
      case "citation": {
        const item = open.get(part.id);
        if (item?.type !== "text") break;
        if (item.citations === undefined) item.citations = [part.citation];
        else item.citations.push(part.citation);
        break;
      }
      case "server-tool-call":
        result.content.push({ type: "server-tool-call", call: part.call });
        break;
      case "server-tool-result":
        result.content.push({ type: "server-tool-result", result: part.result });
        break;
      case "tool-call":
        result.content.push({
          type: "tool-call",
          id: part.id,
          name: part.name,
          arguments: part.arguments,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
        });
        break;
      case "usage":
        result.usage = part.usage;
        break;
      case "finish":
        result.finishReason = part.reason;
        if (part.rawReason !== undefined) result.rawFinishReason = part.rawReason;
        if (part.stopSequence !== undefined) result.stopSequence = part.stopSequence;
        break;
      case "error":
        throw createGatewayErrorFromInfo(part.error);
      default:
        break; // tool-input-* parts: the tool-call part carries the whole call
    }
  }
  return result;
}
