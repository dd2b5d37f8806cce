/** Reasoning state is model-bound: adapters forward it only to where it came from. */
import type { OpaqueReasoningState } from "../../canonical/index.js";

/**
 * Whether state may be forwarded to an upstream: same provider kind, and the same model unless the
 * model is unknown (native state a client brought along; the provider itself will validate it).
 */
export function isStateForUpstream(
  state: OpaqueReasoningState | undefined,
  providerKind: string,
  upstreamModel: string,
): state is OpaqueReasoningState {
  return (
    state !== undefined &&
    state.providerKind === providerKind &&
    (state.upstreamModel === "" || state.upstreamModel === upstreamModel)
  );
}
