/**
 * Long synchronous steps (decoding and parsing an upstream answer of megabytes) take turns of the
 * event loop of their own, one after the other.
 *
 * A step may run at once when the current turn is within its budget (loop-turn.ts) and no other
 * step has run since the loop last polled for I/O; otherwise it waits in one queue for the whole
 * process. After the loop has polled, the first waiting step is resumed, and the next ones only
 * while the turn is still within its budget. Answers that end together ask together, before the
 * first of them has run: without the mark of a step granted they would all run in that turn, and
 * each resumed on a `setImmediate` of its own they would all run in the same check phase of the
 * loop, back to back.
 */
import { readTurnMs, TURN_BUDGET_MS } from "./loop-turn.js";

/** Resolvers of the waiting steps, oldest first from `head` (a queue without `shift`). */
let waiting: Array<(() => void) | undefined> = [];
let head = 0;
let resumeScheduled = false;
/** A step went ahead without waiting since the loop last polled (cleared after the next poll). */
let grantedSincePoll = false;

/** Resolves when the step may run: at once, or once its turn has come after a poll. */
export function startLongStep(): Promise<void> {
  if (head === waiting.length && !grantedSincePoll && readTurnMs() <= TURN_BUDGET_MS) {
    grantedSincePoll = true;
    // Two `setImmediate`s: one scheduled from an I/O callback runs in the same turn of the loop,
    // right after it, before the loop polls for I/O again; the second runs after that poll.
    setImmediate(() => setImmediate(clearGranted));
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (resumeScheduled) return;
    resumeScheduled = true;
    setImmediate(() => setImmediate(resumeAfterPoll));
  });
}

function clearGranted(): void {
  grantedSincePoll = false;
}

function resumeAfterPoll(): void {
  resumeScheduled = false;
  // The turn's clock starts before the first step runs, not at the first look after it.
  readTurnMs();
  resumeNext();
}

/**
 * Resumes the oldest waiting step, then, once what it runs at once is done (a microtask queued
 * behind its continuation), the next while the turn is within its budget.
 */
function resumeNext(): void {
  const resume = waiting[head];
  if (resume === undefined) return;
  waiting[head] = undefined;
  head++;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
  }
  resume();
  queueMicrotask(continueOrWait);
}

function continueOrWait(): void {
  if (head === waiting.length) return;
  if (readTurnMs() <= TURN_BUDGET_MS) {
    resumeNext();
    return;
  }
  // Still in the check phase that follows a poll: one `setImmediate` runs after the next poll.
  if (resumeScheduled) return;
  resumeScheduled = true;
  setImmediate(resumeAfterPoll);
}
