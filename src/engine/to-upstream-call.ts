import type { CanonicalRequest } from "../canonical/request.js";
import type { UpstreamCall } from "../providers/provider-adapter.js";

/**
 * The call as the adapter gets it: the attempt's call with `request` and its own signal, every
 * field written out (a literal never starts with a spread: CONTRIBUTING.md).
 */
export function toUpstreamCall(
  call: Omit<UpstreamCall, "signal">,
  request: CanonicalRequest,
  signal: AbortSignal,
): UpstreamCall {
  return {
    request,
    model: call.model,
    provider: call.provider,
    upstreamModel: call.upstreamModel,
    maxOutputTokens: call.maxOutputTokens,
    signal,
    requestId: call.requestId,
    traceHeaders: call.traceHeaders,
  };
}
