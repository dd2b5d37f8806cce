import { type CanonicalResult, type CanonicalStreamPart, pickCallShape } from "../../canonical/index.js";

/**
 * A complete result as stream parts, for upstreams that ignore `stream: true` and answer with one
 * JSON body: the caller still gets a well-formed stream. Provider state, citations, the records of
 * tools the provider ran itself and the stop sequence ride along, so a result folded back from
 * these parts equals the original. Format-agnostic.
 */
export function convertResultToParts(result: CanonicalResult): CanonicalStreamPart[] {
  const parts: CanonicalStreamPart[] = [
    { type: "response-metadata", upstreamId: result.upstreamId, upstreamModel: result.upstreamModel },
  ];
  let toolIndex = 0;
  result.content.forEach((item, position) => {
    if (item.type === "text") {
      const id = `text-${position}`;
      parts.push({ type: "text-start", id }, { type: "text-delta", id, delta: item.text });
      for (const citation of item.citations ?? []) parts.push({ type: "citation", id, citation });
      parts.push({ type: "text-end", id });
    } else if (item.type === "reasoning") {
      const id = `reasoning-${position}`;
      parts.push({ type: "reasoning-start", id });
      // Signature-only thinking has no text; an empty delta would be noise for every encoder.
      if (item.text !== "") parts.push({ type: "reasoning-delta", id, delta: item.text });
      parts.push({
        type: "reasoning-end",
        id,
        ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
      });
    } else if (item.type === "tool-call") {
      const index = toolIndex++;
      const shape = pickCallShape(item);
      parts.push(
        { type: "tool-input-start", id: item.id, index, name: item.name, ...shape },
        { type: "tool-input-delta", id: item.id, delta: item.arguments },
        { type: "tool-input-end", id: item.id },
        {
          type: "tool-call",
          id: item.id,
          index,
          name: item.name,
          arguments: item.arguments,
          ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
          ...shape,
        },
      );
    } else if (item.type === "server-tool-call") {
      parts.push({
        type: "server-tool-call",
        call: item.call,
        ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
      });
    } else {
      parts.push({
        type: "server-tool-result",
        result: item.result,
        ...(item.providerState === undefined ? {} : { providerState: item.providerState }),
      });
    }
  });
  parts.push({ type: "usage", usage: result.usage });
  parts.push({
    type: "finish",
    reason: result.finishReason,
    ...(result.stopSequence === undefined ? {} : { stopSequence: result.stopSequence }),
    ...(result.rawFinishReason === undefined ? {} : { rawReason: result.rawFinishReason }),
  });
  return parts;
}
