/**
 * The bytes of complete answers waiting for their clients, for the whole process. A complete
 * answer (non-streamed: its usage and price are in it) is made whole before its first byte leaves,
 * so a client that does not read holds its answer until the read deadline, and many such clients
 * of large answers would together hold the sum of their answers: memory without a bound. Past the
 * budget (`limits.held_answers_bytes`), the answers that have waited longest are let go, their
 * connections closed, until the others fit: the client that has waited longest without taking its
 * answer is the one least likely to ever take it. An answer larger than the budget on its own is
 * kept (it is the only one held); a streamed answer is never held here (it stops pulling from its
 * upstream instead).
 */

/** `limits.held_answers_bytes` when the configuration gives none. */
export const DEFAULT_HELD_ANSWERS_BYTES = 256 * 1024 * 1024;

interface HeldAnswer {
  bytes: number;
  letGo(): void;
}

let budgetBytes = DEFAULT_HELD_ANSWERS_BYTES;
let heldBytes = 0;
/** Insertion order: the answer waiting longest first. */
const held = new Set<HeldAnswer>();

/** Sets the process's budget (the gateway does at start, from its configuration). */
export function setHeldAnswersBudget(bytes: number): void {
  budgetBytes = bytes;
}

/** Bytes of the answers waiting for their clients now. */
export function readHeldAnswerBytes(): number {
  return heldBytes;
}

/**
 * An answer of `bytes` waits for its client from now on; `letGo` closes its connection. Returns
 * the release to call once the answer no longer waits (written, or its connection closed).
 * Answers held longer are let go first while the total exceeds the budget.
 */
export function holdAnswer(bytes: number, letGo: () => void): () => void {
  const answer: HeldAnswer = { bytes, letGo };
  held.add(answer);
  heldBytes += bytes;
  for (const oldest of held) {
    if (heldBytes <= budgetBytes || oldest === answer) break;
    release(oldest);
    oldest.letGo();
  }
  return () => release(answer);
}

function release(answer: HeldAnswer): void {
  if (held.delete(answer)) heldBytes -= answer.bytes;
}
