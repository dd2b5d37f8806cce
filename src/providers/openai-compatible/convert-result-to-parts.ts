import type { CanonicalResult, CanonicalStreamPart } from "../../canonical/index.js";

/**
 * A complete result as stream parts, for hosts that ignore `stream: true` and answer with one
 * JSON completion: the caller still gets a well-formed stream. Provider state rides along, so a
 * result folded back from these parts equals the original. Format-agnostic: the Responses adapter
 * uses it too.
 */
export function convertResultToParts(result: CanonicalResult): CanonicalStreamPart[] {
  const parts: CanonicalStreamPart[] = [
    { type: "response-metadata", upstreamId: result.upstreamId, upstreamModel: result.upstreamModel },
  ];
  let toolIndex = 0;
  result.content.forEach((item, position) => {
    if (item.type === "text") {
      const id = `text-${position}`;
      parts.push(
        { type: "text-start", id },
        { type: "text-delta", id, delta: item.text },
        { type: "text-end", id },
      );
    } else if (item.type === "reasoning") {
      const id = `reasoning-${position}`;
      parts.push(
        { type: "reasoning-start", id },
        { type: "reasoning-delta", id, delta: item.text },
        {
          type: "reasoning-end",
          id,
          ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
        },
      );
    } else {
      const index = toolIndex++;
      parts.push(
        { type: "tool-input-start", id: item.id, index, name: item.name },
        { type: "tool-input-delta", id: item.id, delta: item.arguments },
        { type: "tool-input-end", id: item.id },
        {
          type: "tool-call",
          id: item.id,
          index,
          name: item.name,
          arguments: item.arguments,
          ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
        },
      );
    }
  });
  parts.push({ type: "usage", usage: result.usage });
  parts.push({
    type: "finish",
    reason: result.finishReason,
    ...(result.rawFinishReason === undefined ? {} : { rawReason: result.rawFinishReason }),
  });
  return parts;
}
