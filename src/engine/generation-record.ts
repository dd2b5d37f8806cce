/** A generation's usage record: what admission writes at the start and settlement at the end. */
import type { RequestSource } from "../auth/accounts.js";
import type { IngressFormatName } from "../canonical/ingress-format-name.js";

/**
 * `interrupted`: the instance that ran the request died before settling it; another instance (or
 * the same one restarted) settled it from its in-progress record (docs/durability.md).
 */
export type GenerationStatus = "in_progress" | "ok" | "error" | "cancelled" | "interrupted";

export interface GenerationStart {
  /** The request id (X-Request-Id). */
  id: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  ingressFormat: IngressFormatName;
  source: RequestSource;
  stream: boolean;
  /**
   * Admission time on the spend limits' clock (Redis TIME in distributed mode), so the record
   * falls into the same day and month window as its reservation; default: the database's now().
   */
  createdAt?: Date;
  /**
   * Admission's estimate of the prompt (tokens, media included): what an interrupted record is
   * billed when no instance is left to settle it with real usage. Absent in records written before
   * it existed (they are settled at 0 tokens).
   */
  estimatedInputTokens?: number;
  /**
   * The agent client's session (the first of `x-claude-code-session-id`, `session-id`,
   * `x-session-id`) and its name (the user agent's first product token), each at most 128
   * characters; absent when the request sent none (and on records written before they existed).
   */
  sessionId?: string;
  client?: string;
  /**
   * The instance running it (distributed mode): when that instance's lease in Redis expires,
   * another one settles the record as interrupted (engine/dead-instance-sweep.ts). Kept with the
   * record's Redis copy, not in its row.
   */
  instanceId?: string;
  /**
   * Only on a record a sweep lists: the outcome its run settled it with, when its instance died
   * after the answer and before the final row was written (the record's Redis copy keeps it until
   * then). The sweep writes that outcome instead of `interrupted`. Never stored.
   */
  settledWith?: GenerationOutcome;
}

export interface GenerationOutcome {
  status: Exclude<GenerationStatus, "in_progress">;
  errorCode: string | null;
  upstreamProvider: string | null;
  upstreamModel: string | null;
  tokensPrompt: number;
  tokensCompletion: number;
  tokensReasoning: number;
  tokensCachedPrompt: number;
  tokensCacheWrite: number;
  /** Model usage plus server tools, integer micro-USD. */
  costMicroUsd: number;
  toolCostsMicroUsd: Record<string, number>;
  latencyMs: number;
  finishReason: string | null;
  /**
   * The token counts are the gateway's estimate, not usage the upstream reported (it reported
   * none, or the stream ended before its final usage). Absent: false (outcomes parked or journaled
   * before the field existed).
   */
  usageEstimated?: boolean;
  /**
   * Every upstream call the run made, in order; the last `ok` one served (and is the only one
   * billed). Absent on outcomes written before attempts were recorded.
   */
  attempts?: GenerationAttempt[];
  /**
   * Answered from the exact response cache (docs/response-cache.md): billed $0, no upstream
   * called. Absent: false.
   */
  cacheHit?: boolean;
}

/** One upstream call of a generation (a route tried once). */
export interface GenerationAttempt {
  /** Provider id of the route. */
  provider: string;
  /** Catalog model slug the route belongs to (differs from the requested one after a fallback). */
  model: string;
  upstreamModel: string;
  /** `ok`, the error code it failed with, `cancelled`, or `circuit_open` (skipped without a call). */
  outcome: string;
  latencyMs: number;
  /**
   * What this route's upstream went without, as `X-Hi-Dropped` names it (`tools[4](namespace)`,
   * `thinking.display`); absent when nothing was lost (and on attempts recorded before it existed).
   */
  dropped?: string[];
}

export interface GenerationRecord extends GenerationStart, Partial<Omit<GenerationOutcome, "status">> {
  status: GenerationStatus;
  createdAt: Date;
  finishedAt: Date | null;
}
