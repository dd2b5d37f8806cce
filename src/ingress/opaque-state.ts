/**
 * Opaque reasoning state travels through formats that have only one string for it (Messages
 * `thinking.signature`, Responses `reasoning.encrypted_content`). We wrap the provider's state with
 * the provider kind and model that produced it, so the next turn can forward it byte-identical to
 * the same upstream and drop it anywhere else. Clients treat these strings as opaque, as they must.
 *
 * Wire form: `hi1.` + base64url(JSON {k, m, s?, r?, e?, i?, t?}). A string without the prefix came from
 * the vendor directly (a client that talked to the provider before); it is attributed to the
 * format's native provider kind with an unknown model.
 */
import type { OpaqueReasoningState } from "../canonical/index.js";

const PREFIX = "hi1.";

interface WrappedState {
  k: string;
  m: string;
  s?: string;
  r?: string;
  e?: string;
  i?: string;
  t?: string;
}

export function wrapOpaqueState(state: OpaqueReasoningState): string {
  const wrapped: WrappedState = { k: state.providerKind, m: state.upstreamModel };
  if (state.signature !== undefined) wrapped.s = state.signature;
  if (state.redactedData !== undefined) wrapped.r = state.redactedData;
  if (state.encryptedContent !== undefined) wrapped.e = state.encryptedContent;
  if (state.itemId !== undefined) wrapped.i = state.itemId;
  if (state.toolCallId !== undefined) wrapped.t = state.toolCallId;
  return PREFIX + Buffer.from(JSON.stringify(wrapped), "utf8").toString("base64url");
}

/**
 * Reads a string produced by {@link wrapOpaqueState}; anything else is treated as the native
 * state of `nativeKind` (returned with `upstreamModel: ""`, meaning "unknown model") under the field
 * `nativeField`.
 */
export function unwrapOpaqueState(
  text: string,
  nativeKind: string,
  nativeField: "signature" | "redactedData" | "encryptedContent",
): OpaqueReasoningState {
  if (text.startsWith(PREFIX)) {
    try {
      const wrapped = JSON.parse(
        Buffer.from(text.slice(PREFIX.length), "base64url").toString("utf8"),
      ) as WrappedState;
      if (typeof wrapped.k === "string" && typeof wrapped.m === "string") {
        return {
          providerKind: wrapped.k,
          upstreamModel: wrapped.m,
          ...(wrapped.s === undefined ? {} : { signature: wrapped.s }),
          ...(wrapped.r === undefined ? {} : { redactedData: wrapped.r }),
          ...(wrapped.e === undefined ? {} : { encryptedContent: wrapped.e }),
          ...(wrapped.i === undefined ? {} : { itemId: wrapped.i }),
          ...(wrapped.t === undefined ? {} : { toolCallId: wrapped.t }),
        };
      }
    } catch {
      // Not ours after all: fall through and treat it as native.
    }
  }
  return { providerKind: nativeKind, upstreamModel: "", [nativeField]: text };
}
