/**
 * The worst case admission reserves for a request: what the dearest of its route candidates could
 * bill (docs/limits.md). Exported for whatever needs admission's figure without admitting.
 */
import type { CanonicalRequest } from "../canonical/index.js";
import type { CatalogModel } from "../catalog/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import {
  addFixedCost,
  computeReservation,
  estimateWorstCase,
  type WorstCase,
} from "../limits/worst-case-cost.js";
import { selectPricesInForce } from "../metering/prices.js";
import { type ProviderAdapter, routeReadsPdf } from "../providers/provider-adapter.js";
import { resolveOutputCap } from "./admit-request.js";
import { addNativeRoundCost } from "./bound-native-round.js";
import type { AdapterRegistry, DocumentSession } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";

/**
 * The reservation covers the dearest candidate: the largest prompt bound any of their upstreams
 * can bill, at the dearest input and output rates among them, with the largest output cap. One
 * bound per distinct model and provider kind (routes of one kind bound the prompt alike).
 * `requestFor`: the first round's request as each candidate is sent it.
 */
export function estimateAdmissionWorstCase(
  requestFor: (candidate: RouteCandidate) => CanonicalRequest,
  candidates: readonly RouteCandidate[],
  documents: DocumentSession | undefined,
  adapters: AdapterRegistry,
): WorstCase {
  const estimate = (candidate: RouteCandidate, adapter: ProviderAdapter): WorstCase => {
    const request = requestFor(candidate);
    const worst = estimateCandidate(request, candidate.model, adapter, documents);
    return addNativeRoundCost(worst, request, candidate.model);
  };
  if (candidates.length === 1) {
    const { route } = candidates[0];
    const adapter = adapters.get(route.provider.kind);
    if (!adapter)
      throw new GatewayError("internal_error", `No adapter for provider kind "${route.provider.kind}"`);
    return estimate(candidates[0], adapter);
  }
  let combined: WorstCase | undefined;
  const bounded = new Set<string>();
  for (const candidate of candidates) {
    const { model, route } = candidate;
    // Routes of one kind bound the prompt alike, unless their providers run different tools.
    const native =
      requestFor(candidate)
        .nativeServerTools?.map((tool) => tool.tool)
        .join(",") ?? "";
    const key = `${model.slug} ${route.provider.kind} ${native}`;
    if (bounded.has(key)) continue;
    bounded.add(key);
    const adapter = adapters.get(route.provider.kind);
    if (!adapter) continue;
    const worst = estimate(candidate, adapter);
    if (combined === undefined) {
      combined = worst;
      continue;
    }
    combined = {
      inputTokens: Math.max(combined.inputTokens, worst.inputTokens),
      inputPicoUsd: combined.inputPicoUsd > worst.inputPicoUsd ? combined.inputPicoUsd : worst.inputPicoUsd,
      inputTokenPicoUsd:
        combined.inputTokenPicoUsd > worst.inputTokenPicoUsd
          ? combined.inputTokenPicoUsd
          : worst.inputTokenPicoUsd,
      outputTokenPicoUsd:
        combined.outputTokenPicoUsd > worst.outputTokenPicoUsd
          ? combined.outputTokenPicoUsd
          : worst.outputTokenPicoUsd,
      outputCap: Math.max(combined.outputCap, worst.outputCap),
      amountMicroUsd: 0,
    };
    combined.amountMicroUsd = computeReservation(combined, combined.outputCap);
  }
  if (combined === undefined)
    throw new GatewayError("internal_error", "No adapter for any route of this model");
  return combined;
}

/**
 * One candidate's worst case. A route that gets the documents' text is bounded by the rest of the
 * prompt plus the most text they can give (whatever their pages would bill as files), and the
 * price of reading them is reserved with its input.
 */
function estimateCandidate(
  request: CanonicalRequest,
  model: CatalogModel,
  adapter: ProviderAdapter,
  documents: DocumentSession | undefined,
): WorstCase {
  const outputCap = resolveOutputCap(model, request.maxOutputTokens);
  const bounds = { rules: adapter.inputRules, contextLength: model.contextLength };
  // Admission is now: the prices in force now are the ones the request will be billed at.
  const prices = selectPricesInForce(model.prices, Date.now());
  if (documents === undefined || !documents.sendsText(routeReadsPdf(adapter, model))) {
    return estimateWorstCase(request, prices, outputCap, bounds);
  }
  const worst = estimateWorstCase(documents.withoutDocuments(request), prices, outputCap, {
    rules: bounds.rules,
    contextLength: bounds.contextLength,
    extraTokens: documents.maxTextTokens,
  });
  return addFixedCost(worst, documents.maxCostMicroUsd);
}
