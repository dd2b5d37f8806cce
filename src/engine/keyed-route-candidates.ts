/**
 * Routes whose provider has no API key are never tried: a request sent without credentials can
 * only be refused upstream (or, with a host that does not resolve, fail as "unavailable"), which
 * tells the caller nothing about the fix. Another route with its key serves instead; when none
 * has one, the request fails before anything is sent, with `provider_auth` (the gateway's own
 * credentials, not retryable) naming the environment variables to set.
 */
import { isMissingProviderKey } from "../catalog/provider-key.js";
import type { ProviderConfig } from "../catalog/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { RouteCandidate } from "./route-candidates.js";

/** The candidates that can be tried (in their order); throws provider_auth when none can. */
export function keepCandidatesWithKeys(candidates: RouteCandidate[]): RouteCandidate[] {
  if (!candidates.some((candidate) => isMissingProviderKey(candidate.route.provider))) return candidates;
  const usable = candidates.filter((candidate) => !isMissingProviderKey(candidate.route.provider));
  if (usable.length > 0) return usable;
  throw createMissingKeyError(candidates.map((candidate) => candidate.route.provider));
}

function createMissingKeyError(providers: readonly ProviderConfig[]): GatewayError {
  const byVariable = new Map<string, string[]>();
  for (const provider of providers) {
    const variable = provider.apiKeyEnv as string;
    const ids = byVariable.get(variable) ?? [];
    if (!ids.includes(provider.id)) ids.push(provider.id);
    byVariable.set(variable, ids);
  }
  const missing = [...byVariable].map(
    ([variable, ids]) => `${variable} (provider ${ids.map((id) => `"${id}"`).join(", ")})`,
  );
  const variables = [...byVariable.keys()];
  return new GatewayError(
    "provider_auth",
    `The gateway has no API key for this model's provider: ${missing.join(" or ")} ` +
      `${variables.length === 1 ? "is" : "are"} not set. Nothing was sent upstream. ` +
      `The gateway's operator sets ${variables.length === 1 ? "it" : "one of them"} in the gateway's environment and restarts it.`,
  );
}
