/**
 * Stream parts held back for a while and passed on later in the order they came: the parts of a
 * Responses item that completed out of order (openai-responses/sequence-output-items.ts), a
 * caller's tool calls held until the server calls of their round have run (engine/tool-loop.ts).
 *
 * Consecutive deltas of one block are merged as they are held (their pieces joined once, when the
 * parts are taken), so a long held answer comes out as one delta per block: whoever takes the parts
 * does work per block, not per upstream delta, and all of it in one turn of the event loop.
 */
import type { CanonicalStreamPart } from "../../canonical/index.js";

type DeltaPart = Extract<
  CanonicalStreamPart,
  { type: "text-delta" | "reasoning-delta" | "tool-input-delta" }
>;

export class HeldParts {
  private parts: CanonicalStreamPart[] = [];
  /** The pieces of the last held part while it is a delta that may still grow. */
  private lastPieces: string[] | undefined;

  get size(): number {
    return this.parts.length;
  }

  push(part: CanonicalStreamPart): void {
    const last = this.parts.at(-1);
    if (
      this.lastPieces !== undefined &&
      isDelta(part) &&
      last !== undefined &&
      last.type === part.type &&
      (last as DeltaPart).id === part.id
    ) {
      this.lastPieces.push(part.delta);
      return;
    }
    this.sealLast();
    this.parts.push(part);
    if (isDelta(part)) this.lastPieces = [part.delta];
  }

  pushAll(parts: readonly CanonicalStreamPart[]): void {
    for (const part of parts) this.push(part);
  }

  /** The held parts, in order; nothing is held afterwards. */
  take(): CanonicalStreamPart[] {
    this.sealLast();
    const parts = this.parts;
    this.parts = [];
    return parts;
  }

  private sealLast(): void {
    const pieces = this.lastPieces;
    this.lastPieces = undefined;
    if (pieces === undefined || pieces.length === 1) return;
    const merged = { ...(this.parts.at(-1) as DeltaPart) };
    merged.delta = pieces.join("");
    this.parts[this.parts.length - 1] = merged;
  }
}

function isDelta(part: CanonicalStreamPart): part is DeltaPart {
  return part.type === "text-delta" || part.type === "reasoning-delta" || part.type === "tool-input-delta";
}
