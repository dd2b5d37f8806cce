/**
 * What an upstream round can cost beyond its prompt and output when its provider runs tools
 * itself (`request.nativeServerTools`), for the reservation (docs/limits.md, decisions 0027, 0165).
 *
 * A provider running a tool answers in passes: after each call it reads the whole conversation
 * again, with that call's results added, and bills every pass as input. So each call the round
 * may make (`maxUses` per tool, which the adapter sends as the provider's own limit) adds its
 * catalog price and one more pass: the prompt plus the results so far, never more than the context
 * window. A fetch's results are bounded by the `max_content_tokens` sent with it; a search's have
 * no bound on any provider's API, so SEARCH_RESULT_TOKENS stands for one search's results (a list
 * of a few thousand tokens of snippets, with room). A provider that bills past this is costed at
 * the reservation and the excess logged, as any upstream billing past its bound.
 */
import type { CanonicalRequest, NativeServerTool } from "../canonical/index.js";
import type { CatalogModel } from "../catalog/types.js";
import { computeReservation, type WorstCase } from "../limits/worst-case-cost.js";

/** One search's results as the provider adds them to the next pass. */
export const SEARCH_RESULT_TOKENS = 10_000;
/** A fetched page's framing (URL, title, document wrapper) beyond its text. */
const FETCH_FRAMING_TOKENS = 500;

const PICO_PER_MICRO = 1_000_000n;

/** `worst` (the round's prompt and output bound) with its native tools' calls and passes added. */
export function addNativeRoundCost(
  worst: WorstCase,
  request: CanonicalRequest,
  model: CatalogModel,
): WorstCase {
  const tools = request.nativeServerTools ?? [];
  if (tools.length === 0) return worst;
  let callsMicroUsd = 0;
  let passTokens = 0;
  let results = 0;
  for (const tool of tools) {
    callsMicroUsd += tool.maxUses * (model.nativeServerTools?.[tool.tool]?.pricePerCallMicroUsd ?? 0);
    for (let call = 0; call < tool.maxUses; call++) {
      results += resultTokens(tool);
      passTokens += Math.min(model.contextLength, worst.inputTokens + results);
    }
  }
  // At the prompt's own rate (cache writes included when the request asks for them).
  const added: WorstCase = {
    inputTokens: worst.inputTokens,
    inputPicoUsd:
      worst.inputPicoUsd +
      BigInt(passTokens) * worst.inputTokenPicoUsd +
      BigInt(callsMicroUsd) * PICO_PER_MICRO,
    inputTokenPicoUsd: worst.inputTokenPicoUsd,
    outputTokenPicoUsd: worst.outputTokenPicoUsd,
    outputCap: worst.outputCap,
    amountMicroUsd: worst.amountMicroUsd,
  };
  added.amountMicroUsd = computeReservation(added, added.outputCap);
  return added;
}

function resultTokens(tool: NativeServerTool): number {
  return tool.tool === "web_fetch"
    ? (tool.maxContentTokens ?? SEARCH_RESULT_TOKENS) + FETCH_FRAMING_TOKENS
    : SEARCH_RESULT_TOKENS;
}
