/**
 * A generation as it settled, for whoever reports on the request after it ended (the request log
 * line, metrics, traces). A file of its own so billing, which announces it, and the admitted
 * generation, which carries the promise of it, both depend on it and not on each other.
 */
import type { ServerToolId } from "../canonical/index.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";

/** A generation as it settled. */
export interface SettledGeneration {
  outcome: GenerationOutcome;
  /** The response cache was looked up: answered from it (`hit`) or not (`miss`). */
  cache?: "hit" | "miss";
  /** The attempt that served (absent when none did); its outcome tells how it ended. */
  served: GenerationAttempt | undefined;
  /** Every server-tool call the run executed, in the order they started (empty without any). */
  toolCalls: ExecutedToolCall[];
}

/** One server-tool call as the run executed it, for whoever reports on the request afterwards. */
export interface ExecutedToolCall {
  tool: ServerToolId;
  status: "completed" | "failed";
  /** The failure's code (`unavailable`, `url_not_allowed`, …) when `failed`. */
  errorCode?: string;
  costMicroUsd: number;
  /** The model's provider ran it (`engine: "native"`); the gateway only saw its record. */
  native?: true;
  /** performance.now() when it started, and how long it ran. */
  startedAt: number;
  durationMs: number;
}
