/**
 * Text and reasoning blocks of a canonical stream, for every provider kind's stream parser: the
 * one place that writes their lifecycle (`*-start → *-delta* → *-end`).
 *
 * - A block's start part goes out with its first non-empty delta, so an empty upstream block never
 *   reaches the client as a phantom empty part. A block that was never started ends silently,
 *   unless its end carries provider state (a reasoning block that holds only a signature or
 *   encrypted content): then it is started and ended, empty.
 * - `createSequentialBlocks` serves upstreams whose text and reasoning arrive as one flat sequence
 *   of deltas (Chat Completions, Gemini): at most one block is open, a delta of the other kind
 *   closes it, and ids are numbered in order across both kinds (`text-0`, `reasoning-1`, …).
 *   Upstreams that announce their blocks (Messages, Responses) keep one `ContentBlock` per
 *   announced block and use the functions below directly.
 */
import type { CanonicalStreamPart, OpaqueReasoningState } from "../../canonical/index.js";

export type ContentBlockKind = "text" | "reasoning";

export interface ContentBlock {
  readonly kind: ContentBlockKind;
  readonly id: string;
  /** Whether the start part has gone out. */
  started: boolean;
}

export function createContentBlock(kind: ContentBlockKind, id: string): ContentBlock {
  return { kind, id, started: false };
}

/** Writes the start part, once. */
export function startContentBlock(block: ContentBlock, parts: CanonicalStreamPart[]): void {
  if (block.started) return;
  block.started = true;
  parts.push(
    block.kind === "text" ? { type: "text-start", id: block.id } : { type: "reasoning-start", id: block.id },
  );
}

/** Writes a delta (starting the block first); an empty delta writes nothing. */
export function appendToContentBlock(block: ContentBlock, delta: string, parts: CanonicalStreamPart[]): void {
  if (delta === "") return;
  startContentBlock(block, parts);
  parts.push(
    block.kind === "text"
      ? { type: "text-delta", id: block.id, delta }
      : { type: "reasoning-delta", id: block.id, delta },
  );
}

/**
 * Writes the end part. A block never started ends without parts, unless `providerState` must be
 * delivered: then it is started first. `providerState` is for reasoning blocks only.
 */
export function endContentBlock(
  block: ContentBlock,
  parts: CanonicalStreamPart[],
  providerState?: OpaqueReasoningState,
): void {
  if (!block.started) {
    if (providerState === undefined || block.kind !== "reasoning") return;
    startContentBlock(block, parts);
  }
  if (block.kind === "text") {
    parts.push({ type: "text-end", id: block.id });
    return;
  }
  parts.push({
    type: "reasoning-end",
    id: block.id,
    ...(providerState === undefined ? {} : { providerState }),
  });
}

export interface SequentialBlocks {
  /** Appends text; an open reasoning block is closed first. */
  appendText(parts: CanonicalStreamPart[], delta: string): void;
  /** Appends reasoning; an open text block is closed first. */
  appendReasoning(parts: CanonicalStreamPart[], delta: string): void;
  /** Opens a reasoning block without content (closing open text), unless one is open already. */
  openReasoning(parts: CanonicalStreamPart[]): void;
  closeText(parts: CanonicalStreamPart[]): void;
  /** Closes the open reasoning block, with the provider state its end carries. */
  closeReasoning(parts: CanonicalStreamPart[], providerState?: OpaqueReasoningState): void;
  readonly textOpen: boolean;
  /** The open text block's id (what a citation of it names). */
  readonly textId: string | undefined;
  readonly reasoningOpen: boolean;
}

export interface SequentialBlocksOptions {
  /** Called right after a text block's end part, for what must follow the text (Gemini signatures). */
  afterTextEnd?(parts: CanonicalStreamPart[]): void;
}

export function createSequentialBlocks(options: SequentialBlocksOptions = {}): SequentialBlocks {
  let text: ContentBlock | undefined;
  let reasoning: ContentBlock | undefined;
  let blockCount = 0;

  const closeText = (parts: CanonicalStreamPart[]): void => {
    if (text === undefined) return;
    endContentBlock(text, parts);
    text = undefined;
    options.afterTextEnd?.(parts);
  };

  const closeReasoning = (parts: CanonicalStreamPart[], providerState?: OpaqueReasoningState): void => {
    if (reasoning === undefined) return;
    endContentBlock(reasoning, parts, providerState);
    reasoning = undefined;
  };

  const openReasoning = (parts: CanonicalStreamPart[]): void => {
    closeText(parts);
    if (reasoning !== undefined) return;
    reasoning = createContentBlock("reasoning", `reasoning-${blockCount++}`);
    startContentBlock(reasoning, parts);
  };

  return {
    appendText(parts, delta) {
      if (delta === "") return;
      closeReasoning(parts);
      text ??= createContentBlock("text", `text-${blockCount++}`);
      appendToContentBlock(text, delta, parts);
    },
    appendReasoning(parts, delta) {
      if (delta === "") return;
      openReasoning(parts);
      appendToContentBlock(reasoning!, delta, parts);
    },
    openReasoning,
    closeText,
    closeReasoning,
    get textOpen() {
      return text !== undefined;
    },
    get textId() {
      return text?.id;
    },
    get reasoningOpen() {
      return reasoning !== undefined;
    },
  };
}
