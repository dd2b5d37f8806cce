/**
 * Lets pending I/O run before going on: long synchronous steps of one request (parsing a body of
 * megabytes, converting thousands of messages) are split by it, so no step holds the event loop
 * for long (docs/limits.md, "Bounded work").
 *
 * Two `setImmediate`s: one scheduled from an I/O callback runs in the same turn of the loop, right
 * after it, before the loop polls for I/O again; the second runs after that poll.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Milliseconds of synchronous work after which a request yields before its next step. */
export const YIELD_AFTER_MS = 4;
