/**
 * Canonical stream parts folded into one result, so a non-streamed answer and a stream share one
 * mapping: an adapter whose JSON answer is easiest read as parts (Gemini) folds them, and the
 * engine assembles a non-streamed answer with server tools from each round's parts. Text and
 * reasoning blocks keep their order; citations stay on the text they cite; server-tool calls and
 * results stand where they happened. An `error` part throws its GatewayError. Each block's deltas
 * are kept as pieces and joined once, when the parts end.
 */
import type {
  CanonicalResult,
  CanonicalStreamPart,
  CanonicalUsage,
  ResultContent,
  UrlCitation,
} from "../../canonical/index.js";
import { createEmptyUsage, pickCallShape, TextPieces } from "../../canonical/index.js";
import { readStreamError } from "../../errors/gateway-error.js";

type TextEntry = { type: "text"; text: string; citations?: UrlCitation[] };
type ReasoningEntry = Extract<ResultContent, { type: "reasoning" }>;
/** A text or reasoning entry of the result and its text's pieces so far. */
type Accumulator = { entry: TextEntry | ReasoningEntry; pieces: TextPieces };

export function foldStreamParts(parts: Iterable<CanonicalStreamPart>): CanonicalResult {
  const content: ResultContent[] = [];
  const texts = new Map<string, Accumulator & { entry: TextEntry }>();
  const reasonings = new Map<string, Accumulator & { entry: ReasoningEntry }>();
  const accumulators: Accumulator[] = [];
  let usage: CanonicalUsage = createEmptyUsage();
  const result: CanonicalResult = { content, finishReason: "stop", usage };
  for (const part of parts) {
    switch (part.type) {
      case "response-metadata":
        if (part.upstreamId !== undefined) result.upstreamId ??= part.upstreamId;
        if (part.upstreamModel !== undefined) result.upstreamModel ??= part.upstreamModel;
        break;
      case "text-start": {
        const accumulator: Accumulator & { entry: TextEntry } = {
          entry: { type: "text", text: "" },
          pieces: new TextPieces(),
        };
        texts.set(part.id, accumulator);
        accumulators.push(accumulator);
        content.push(accumulator.entry);
        break;
      }
      case "text-delta":
        texts.get(part.id)?.pieces.append(part.delta);
        break;
      case "citation": {
        const entry = texts.get(part.id)?.entry;
        if (entry === undefined) break;
        if (entry.citations === undefined) entry.citations = [part.citation];
        else entry.citations.push(part.citation);
        break;
      }
      case "reasoning-start": {
        const accumulator: Accumulator & { entry: ReasoningEntry } = {
          entry: { type: "reasoning", text: "" },
          pieces: new TextPieces(),
        };
        reasonings.set(part.id, accumulator);
        accumulators.push(accumulator);
        content.push(accumulator.entry);
        break;
      }
      case "reasoning-delta":
        reasonings.get(part.id)?.pieces.append(part.delta);
        break;
      case "reasoning-end": {
        const entry = reasonings.get(part.id)?.entry;
        if (entry && part.providerState !== undefined) entry.providerState = part.providerState;
        break;
      }
      case "tool-call":
        content.push({
          type: "tool-call",
          id: part.id,
          name: part.name,
          arguments: part.arguments,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
          ...pickCallShape(part),
        });
        break;
      case "server-tool-call":
        content.push({
          type: "server-tool-call",
          call: part.call,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
        });
        break;
      case "server-tool-result":
        content.push({
          type: "server-tool-result",
          result: part.result,
          ...(part.providerState === undefined ? {} : { providerState: part.providerState }),
        });
        break;
      case "usage":
        usage = part.usage;
        result.usage = usage;
        break;
      case "finish":
        result.finishReason = part.reason;
        if (part.stopSequence !== undefined) result.stopSequence = part.stopSequence;
        if (part.rawReason !== undefined) result.rawFinishReason = part.rawReason;
        break;
      case "error":
        throw readStreamError(part.error);
      default:
        break; // tool-input-* parts: the tool-call part carries the whole call
    }
  }
  for (const { entry, pieces } of accumulators) entry.text = pieces.text();
  return result;
}
