/**
 * How long the event loop's current turn has run, and a way to end it. A stream's parts flow
 * through async generators from the upstream body to the client's socket; while the body holds
 * data already read, every step of that chain resolves at once, so without a break one stream
 * would be parsed, encoded and written in a single turn however long it is, and nothing else
 * (another request, `/healthz`) would be read meanwhile. The stream reader asks before each
 * network chunk and lets I/O in once the turn has run past its budget. Decoding and parsing
 * an upstream answer of megabytes waits for a turn of its own (long-steps.ts).
 */

/** Milliseconds of one turn after which a stream lets other work in before it goes on. */
export const TURN_BUDGET_MS = 4;

let turnStartedAt: number | undefined;

/**
 * Milliseconds since the current turn started, as seen from the first call in it: the clock starts
 * at that call and stops when the loop reaches its next check phase (a `setImmediate`).
 */
export function readTurnMs(): number {
  const now = performance.now();
  if (turnStartedAt === undefined) {
    turnStartedAt = now;
    setImmediate(endTurn);
  }
  return now - turnStartedAt;
}

function endTurn(): void {
  turnStartedAt = undefined;
}

/**
 * Lets pending I/O run before going on. Two `setImmediate`s: one scheduled from an I/O callback
 * runs in the same turn of the loop, right after it, before the loop polls for I/O again; the
 * second runs after that poll.
 */
export function letIoIn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
