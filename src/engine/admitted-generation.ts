/**
 * A generation between admission and settlement: what the engine admitted and the run works on.
 * A file of its own so the run and settlement depend on it, not on the engine that creates it.
 */
import type { CanonicalRequest, CanonicalResult } from "../canonical/index.js";
import type { IngressFormatName } from "../canonical/ingress-format-name.js";
import type { Reservation } from "../limits/spend-guard.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { GenerationStart } from "./generation-record.js";
import type { AdmittedCaller, CacheTicket, DocumentSession, ServerToolSession } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";
import type { SettledGeneration } from "./settled-generation.js";

export type { ExecutedToolCall, SettledGeneration } from "./settled-generation.js";

export interface GenerationInput {
  requestId: string;
  format: IngressFormatName;
  caller: AdmittedCaller;
  request: CanonicalRequest;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** The request's trace, when it is traced: told of every attempt as it starts. */
  trace?: AttemptTracer;
  /** The client's session id (its session header) and name (its user agent's first product). */
  sessionId?: string;
  client?: string;
}

/** What a traced request's run tells its trace (the trace itself lives in observability/). */
export interface AttemptTracer {
  /**
   * An attempt starts now (`index`: its place in the outcome's attempts, skipped routes
   * included). Returns the headers that make its upstream call part of the trace.
   */
  startAttempt(index: number): Readonly<Record<string, string>>;
}

/** A request that passed admission and has its in-progress record. */
export interface AdmittedGeneration extends GenerationInput {
  /** The current attempt's call (the serving one once the run chose it). */
  call: Omit<UpstreamCall, "signal">;
  adapter: ProviderAdapter;
  /** The routes it may be served by, in the order they are tried. */
  candidates: RouteCandidate[];
  /**
   * The call for one candidate, before its attempt adds its trace headers; `request` is the first
   * round's as that route is sent it (the tools its provider runs itself, `request.nativeServerTools`).
   */
  callFor(candidate: RouteCandidate): Omit<UpstreamCall, "signal">;
  /** Its worst-case cost held against the key's limits and the balance until settlement. */
  reservation: Reservation;
  /** The usage record's identity; settlement writes it final whether or not it was started. */
  record: GenerationStart;
  /** Settles when the in-progress record is stored (store-dependent: see admit-generation.ts); never rejects. */
  recorded: Promise<void>;
  /**
   * Resolves once the run has settled (never rejects): the outcome as written and the attempt
   * that served, for whoever reports on the request after it ended (the request log line).
   */
  settled: Promise<SettledGeneration>;
  /** Meters, prices, reserves and settles it (generation-billing.ts); the run is given it. */
  billing: GenerationBilling;
  /** Admission's estimate of the prompt (tokens, media included), billed when no usage tells better. */
  estimatedInputTokens: number;
  /** The longest the generation may run, and when that is over (performance.now() time). */
  deadlineMs: number;
  deadline: number;
  /** The activated server tools, prepared for this run (absent when none is activated). */
  serverTools?: ServerToolSession;
  /** The request's documents, read for each route as it needs them (absent without file parts). */
  documents?: DocumentSession;
  /** Upstream rounds the server-tool loop may make in all. */
  maxToolRounds: number;
  /** The most calls of one tool a provider running it itself may make per upstream round. */
  maxNativeCallsPerRound: number;
  /**
   * The request is cached (docs/response-cache.md): its key and time-to-live, whether this run is
   * a hit (set before the run starts), the most bytes of answer a miss keeps to store, and its
   * one lookup, started at admission (never rejects: a failed lookup is a miss).
   */
  cache?: {
    ticket: CacheTicket;
    hit: boolean;
    maxBytes: number;
    lookup: Promise<CanonicalResult | undefined>;
  };
}
