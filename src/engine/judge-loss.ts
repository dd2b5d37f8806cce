/**
 * What one attempt's upstream goes without (the adapter's `listDropped`), as the run records it and
 * the response reports it (`X-Hi-Dropped`), and the strict-mode refusal when there is any.
 */
import type { CanonicalRequest } from "../canonical/request.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";

/** The most entries one attempt records; a longer list ends with `…(+N)`. */
export const MAX_DROPPED_ENTRIES = 64;

export function listDroppedFor(adapter: ProviderAdapter, call: UpstreamCall): string[] {
  const dropped = adapter.listDropped?.(call) ?? [];
  if (dropped.length <= MAX_DROPPED_ENTRIES) return dropped;
  const kept = dropped.slice(0, MAX_DROPPED_ENTRIES);
  kept.push(`…(+${dropped.length - MAX_DROPPED_ENTRIES})`);
  return kept;
}

/**
 * Strict mode: a route that would lose anything is not called; the request ends with
 * `invalid_request` naming the first field it would lose (`tools[4]` for `tools[4](namespace)`).
 * Undefined when nothing is lost or the request is not strict.
 */
export function refuseLoss(
  request: CanonicalRequest,
  dropped: readonly string[],
  model: string,
): GatewayError | undefined {
  if (request.strict !== true || dropped.length === 0) return undefined;
  const param = dropped[0].replace(/\(.*\)$/, "");
  return GatewayError.invalidRequest(
    `Strict mode: the route of ${model} would go without ${dropped.join(", ")}; ` +
      "send the request without it, pick a model whose provider speaks this format, or leave strict mode off",
    param,
  );
}
