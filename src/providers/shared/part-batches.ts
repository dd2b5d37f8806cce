/**
 * Streams travel as batches: every SSE event of one network chunk is parsed in one go and its parts
 * leave as one array, so a chunk of twenty frames costs one await per layer instead of twenty. The
 * consumer still sees single parts: `flattenBatches` hands them out from the current batch without
 * an async generator of its own (one resolved promise per part).
 */
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { SseEvent } from "./sse-reader.js";

/**
 * What one event did: `more` (read on), `break` (the stream is over: run `finish`), `done` (the
 * stream is over and complete: no `finish`).
 */
export type EventVerdict = "more" | "break" | "done";

export interface EventStreamParser {
  /** Pushes the parts `event` completes onto `out`; throws a GatewayError for a failure. */
  accept(event: SseEvent, out: CanonicalStreamPart[]): EventVerdict;
  /** The events ended (or an event said `break`): pushes the closing parts, or throws. */
  finish(out: CanonicalStreamPart[]): void;
}

/**
 * The parts of each batch of events, a batch per batch. Parts completed before a failure in the
 * same batch are yielded before the failure is thrown, as a part-by-part parser would have.
 */
export async function* parseEventBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
  parser: EventStreamParser,
): AsyncGenerator<CanonicalStreamPart[]> {
  for await (const events of batches) {
    const out: CanonicalStreamPart[] = [];
    let verdict: EventVerdict = "more";
    let failure: unknown;
    try {
      for (let index = 0; index < events.length && verdict === "more"; index++) {
        verdict = parser.accept(events[index], out);
      }
      if (verdict === "break") parser.finish(out);
    } catch (error) {
      failure = error ?? new Error("stream parser failed");
    }
    if (out.length > 0) yield out;
    if (failure !== undefined) throw failure;
    if (verdict !== "more") return;
  }
  const out: CanonicalStreamPart[] = [];
  let failure: unknown;
  try {
    parser.finish(out);
  } catch (error) {
    failure = error ?? new Error("stream parser failed");
  }
  if (out.length > 0) yield out;
  if (failure !== undefined) throw failure;
}

/** Each event of `events` as a batch of its own (a parser's per-event form, for callers that have events). */
export async function* eachAsBatch(events: AsyncIterable<SseEvent>): AsyncGenerator<SseEvent[]> {
  for await (const event of events) yield [event];
}

/**
 * The items of `batches`, one by one. Returning early returns the batches' iterator (which stops
 * its upstream); an error of `batches` is thrown from the `next()` that reaches it.
 */
export function flattenBatches<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  const source = batches[Symbol.asyncIterator]();
  let current: readonly T[] = [];
  let index = 0;
  let ended = false;
  const pull = async (): Promise<IteratorResult<T>> => {
    while (!ended) {
      const step = await source.next();
      if (step.done) break;
      if (step.value.length === 0) continue;
      current = step.value;
      index = 1;
      return { done: false, value: current[0] };
    }
    ended = true;
    return { done: true, value: undefined };
  };
  const flat: AsyncGenerator<T> = {
    next() {
      if (index < current.length) return Promise.resolve({ done: false, value: current[index++] });
      current = [];
      index = 0;
      return pull();
    },
    async return(value?: unknown) {
      current = [];
      ended = true;
      await source.return?.();
      return { done: true, value: value as T };
    },
    async throw(error?: unknown) {
      current = [];
      ended = true;
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return flat;
    },
  } as AsyncGenerator<T>;
  return flat;
}

/**
 * An event's JSON object (`data` trimmed); undefined for an empty frame or JSON that is not an
 * object (skipped, as the official SDKs skip them). Throws `provider_unavailable` for a frame that
 * is not JSON.
 */
export function readFrameObject(data: string): object | undefined {
  if (data === "") return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    throw new GatewayError("provider_unavailable", "The upstream stream sent a malformed frame");
  }
  return typeof payload === "object" && payload !== null && !Array.isArray(payload) ? payload : undefined;
}
