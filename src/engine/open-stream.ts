/**
 * The start of a streamed attempt: its first part, waited for up to `firstPartWaitMs`. A failure
 * in that window fails the attempt (the run may fail over). A slow first part (a reasoning model
 * thinking quietly) does not hold the response back longer: the stream starts, keep-alives flow,
 * and a later failure becomes an in-band error.
 */
import type { CanonicalStreamPart } from "../canonical/index.js";
import { GatewayError, readStreamError, toGatewayError } from "../errors/gateway-error.js";

export type OpenedStream =
  | { kind: "failed"; error: GatewayError }
  /** `first`: the first step, still pending when `slow`. */
  | { kind: "opened"; slow: boolean; first: Promise<IteratorResult<CanonicalStreamPart>> };

type FirstStep =
  | { kind: "step"; step: IteratorResult<CanonicalStreamPart> }
  | { kind: "thrown"; error: unknown }
  | { kind: "slow" };

export async function openStream(
  iterator: AsyncIterator<CanonicalStreamPart>,
  firstPartWaitMs: number,
): Promise<OpenedStream> {
  const first = iterator.next();
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race<FirstStep>([
    first.then(
      (step) => ({ kind: "step", step }),
      (error: unknown) => ({ kind: "thrown", error }),
    ),
    new Promise<{ kind: "slow" }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "slow" }), firstPartWaitMs);
    }),
  ]);
  clearTimeout(timer);
  if (waited.kind === "slow") return { kind: "opened", slow: true, first };
  if (waited.kind === "thrown") return { kind: "failed", error: toGatewayError(waited.error) };
  if (waited.step.done) return { kind: "failed", error: createEmptyStreamError() };
  const part = waited.step.value;
  if (part.type === "error") return { kind: "failed", error: readStreamError(part.error) };
  return { kind: "opened", slow: false, first };
}

/** An upstream stream that ended before any part. */
export function createEmptyStreamError(): GatewayError {
  return new GatewayError("provider_unavailable", "Upstream stream ended without any output");
}
