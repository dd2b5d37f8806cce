/**
 * Puts the canonical parts of Responses output items out in `output_index` order, one item at a
 * time, even when the upstream completes items out of order (OpenRouter finishes
 * a reasoning item at index 0 after the function call at index 1).
 *
 * The lowest unfinished item streams live; parts of later items are held until every earlier item
 * is done. OpenAI itself streams one item at a time, so nothing waits there. Holding keeps the
 * canonical lifecycles from overlapping and, more important, keeps a reasoning item in front of
 * the item that followed it, which is the order the next turn must replay them in.
 */
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { HeldParts } from "../shared/held-parts.js";

export interface OutputSequencer {
  /** Parts of the item at `outputIndex`: emitted now if it is the live item, else held. */
  push(outputIndex: number, parts: CanonicalStreamPart[]): void;
  /** The item at `outputIndex` is complete; later items may go live. */
  complete(outputIndex: number): void;
  /** Takes the parts that are ready, in order. */
  drain(): CanonicalStreamPart[];
  /** Takes everything, held parts included, in `output_index` order (end of the response). */
  drainAll(): CanonicalStreamPart[];
}

interface Entry {
  outputIndex: number;
  held: HeldParts;
  completed: boolean;
}

export function createOutputSequencer(): OutputSequencer {
  /** Items not yet passed, sorted by index; `pending[0]` is the live one. */
  let pending: Entry[] = [];
  const known = new Set<number>();
  let ready: CanonicalStreamPart[] = [];

  function findEntry(outputIndex: number): Entry | undefined {
    const existing = pending.find((entry) => entry.outputIndex === outputIndex);
    if (existing !== undefined || known.has(outputIndex)) return existing;
    known.add(outputIndex);
    // An item below the live one can only be late: holding it would block nothing, so it streams.
    if (pending.length > 0 && outputIndex < pending[0].outputIndex) return undefined;
    const entry: Entry = { outputIndex, held: new HeldParts(), completed: false };
    const position = pending.findIndex((other) => other.outputIndex > outputIndex);
    if (position === -1) pending.push(entry);
    else pending.splice(position, 0, entry);
    return entry;
  }

  function advance(): void {
    while (pending.length > 0 && pending[0].completed) {
      pending.shift();
      const next = pending[0];
      if (next !== undefined) append(ready, next.held.take());
    }
  }

  function take(): CanonicalStreamPart[] {
    const parts = ready;
    ready = [];
    return parts;
  }

  return {
    push(outputIndex, parts) {
      const entry = findEntry(outputIndex);
      if (entry === undefined || entry === pending[0]) append(ready, parts);
      else entry.held.pushAll(parts);
    },
    complete(outputIndex) {
      const entry = findEntry(outputIndex);
      if (entry === undefined) return;
      entry.completed = true;
      advance();
    },
    drain: take,
    drainAll() {
      for (const entry of pending) append(ready, entry.held.take());
      pending = [];
      return take();
    },
  };
}

/** A loop, not push(...parts): an item held back for long holds more parts than a spread may pass. */
function append(target: CanonicalStreamPart[], parts: readonly CanonicalStreamPart[]): void {
  for (const part of parts) target.push(part);
}
