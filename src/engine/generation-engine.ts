/**
 * The engine: what the HTTP layer calls to admit a generation and run it. It holds what lives
 * longer than a request (the circuit breakers, the retry policy, the route candidates per model,
 * the count of unsettled generations) and hands each request to the parts that do the work:
 * admission (admit-generation.ts), the run (generation-run.ts) with its failover loop
 * (route-failover.ts), and the generation's billing (generation-billing.ts). A cached request's
 * one response-cache lookup, started at admission, decides here, before the run's first upstream
 * call, whether the stored answer serves it.
 */
import type { CanonicalResult } from "../canonical/index.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import { GenerationAdmission } from "./admit-generation.js";
import type { AdmittedGeneration, GenerationInput } from "./admitted-generation.js";
import {
  type BreakerPolicy,
  type BreakerState,
  CircuitBreakers,
  DEFAULT_BREAKER_POLICY,
} from "./circuit-breaker.js";
import { GenerationRun, type RunServices } from "./generation-run.js";
import { PendingSettlements } from "./pending-settlements.js";
import type {
  AdapterRegistry,
  AnswerCache,
  ClientSignal,
  DocumentPreparer,
  EngineStore,
  ServerTools,
} from "./ports.js";
import { createCacheCandidate, createReplayRegistry } from "./replay-cached-answer.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry-policy.js";
import { listRouteCandidates, type RouteCandidate } from "./route-candidates.js";
import { UnsettledGenerations } from "./unsettled-generations.js";

export { DEFAULT_MAX_NATIVE_CALLS_PER_ROUND, DEFAULT_MAX_TOOL_ROUNDS } from "./admit-generation.js";
export type { AdmittedGeneration, GenerationInput, SettledGeneration } from "./admitted-generation.js";

export interface EngineDependencies {
  config: GatewayConfig;
  store: EngineStore;
  adapters: AdapterRegistry;
  logger: Logger;
  /** Spend and rate limits: reserves at admission, settles with the actual cost. */
  spendGuard: SpendGuard;
  /** Retries and failover across routes (default: DEFAULT_RETRY_POLICY). */
  retryPolicy?: RetryPolicy;
  /** Per-route circuit breakers (default: DEFAULT_BREAKER_POLICY). */
  breakerPolicy?: BreakerPolicy;
  /** Jitter source for backoff (tests pass a fixed one). */
  random?: () => number;
  /** The server tools this gateway runs (absent: activating one is refused as not configured). */
  serverTools?: ServerTools;
  /** PDFs as each route reads them (absent: every route gets them as sent). */
  documents?: DocumentPreparer;
  /** This instance's id, written into every in-progress record (dead-instance-sweep.ts). */
  instanceId?: string;
  /** The exact response cache (absent: nothing is cached). */
  answerCache?: AnswerCache;
}

/** One route's breaker, as metrics label it. */
export interface RouteBreakerState {
  provider: string;
  upstreamModel: string;
  state: BreakerState;
}

export class GenerationEngine {
  /** Admitted generations whose outcome is not written yet (see `whenSettled`). */
  private readonly unsettled = new UnsettledGenerations();
  private readonly pendingSettlements = new PendingSettlements();
  private readonly breakers: CircuitBreakers;
  private readonly admission: GenerationAdmission;
  /** The catalog's routes, each once (as its breaker knows it). */
  private catalogRoutes?: RouteCandidate[];
  /** What every run is given (generation-run.ts): made once, not per request. */
  private readonly runServices: RunServices;

  constructor(private readonly deps: EngineDependencies) {
    const routing = deps.config.routing;
    const retryPolicy =
      deps.retryPolicy ??
      (routing
        ? {
            retries: routing.retries,
            baseDelayMs: routing.retryBaseDelayMs,
            maxRetryAfterMs: routing.maxRetryAfterMs,
            failoverDeadlineMs: routing.failoverDeadlineMs,
          }
        : DEFAULT_RETRY_POLICY);
    this.breakers = new CircuitBreakers(
      deps.breakerPolicy ??
        (routing
          ? { failures: routing.breakerFailures, cooldownMs: routing.breakerCooldownMs }
          : DEFAULT_BREAKER_POLICY),
    );
    this.runServices = {
      adapters: deps.adapters,
      breakers: this.breakers,
      policy: retryPolicy,
      random: deps.random,
      answerCache: deps.answerCache,
    };
    this.admission = new GenerationAdmission({
      config: deps.config,
      store: deps.store,
      adapters: deps.adapters,
      logger: deps.logger,
      spendGuard: deps.spendGuard,
      serverTools: deps.serverTools,
      documents: deps.documents,
      instanceId: deps.instanceId,
      answerCache: deps.answerCache,
      billing: {
        store: deps.store,
        logger: deps.logger,
        unsettled: this.unsettled,
        pending: this.pendingSettlements,
      },
    });
  }

  /**
   * Waits, at most `timeoutMs`, for this instance's settlements of the key's (or its workspace's)
   * finished generations: a read of the key's spend right after an answer then sees that answer's
   * real cost, not its reservation, as when the answer waited for its settlement.
   */
  async awaitPendingSettlements(keyId: string, workspaceId: string, timeoutMs: number): Promise<void> {
    await this.pendingSettlements.waitFor(keyId, workspaceId, timeoutMs);
  }

  /** Admitted generations not settled yet: each holds its reservation on this instance. */
  get generationsInFlight(): number {
    return this.unsettled.size;
  }

  /** Every catalog route's circuit-breaker state on this instance (read by metrics at scrape time). */
  routeBreakerStates(): RouteBreakerState[] {
    this.catalogRoutes ??= listRouteCandidates(this.deps.config.models);
    return this.catalogRoutes.map(({ route, key }) => ({
      provider: route.provider.id,
      upstreamModel: route.upstreamModel,
      state: this.breakers.state(key),
    }));
  }

  /**
   * Resolves once every admitted generation has handed its outcome to the store (the shutdown
   * waits for this before it closes the store), or after `timeoutMs`; true when none is left.
   */
  whenSettled(timeoutMs: number): Promise<boolean> {
    return this.unsettled.whenSettled(timeoutMs);
  }

  /**
   * Admission (admit-generation.ts): throws the GatewayError that refuses the request, else the
   * admitted generation with its reservation, its in-progress record started and its billing open.
   */
  admit(input: GenerationInput): Promise<AdmittedGeneration> {
    return this.admission.admit(input);
  }

  /**
   * Runs an admitted generation (generation-run.ts) and settles it, whatever happens. Resolves
   * once an attempt serves: non-streamed with `run.result` and the run settled, streamed once its
   * first part arrived or `firstPartWaitMs` passed. When none serves, throws the last classified
   * error (the run is settled). A streamed run's headers wait for the in-progress record unless
   * the store answers lookups for it at once.
   */
  async run(
    admitted: AdmittedGeneration,
    signal: ClientSignal,
    firstPartWaitMs: number,
  ): Promise<GenerationRun> {
    // Non-streamed requests wait for the record before the upstream call; streams only before
    // their headers, so the first attempt overlaps the write.
    if (!admitted.request.stream) await admitted.recorded;
    // The one look at the response cache, before any upstream call; a hit is the run's only route.
    // It was started at admission, beside the reservation.
    const stored = admitted.cache === undefined ? undefined : await admitted.cache.lookup;
    const services = stored === undefined ? this.runServices : this.serveFromCache(admitted, stored);
    const run = await GenerationRun.start(admitted, signal, services, { firstPartWaitMs });
    // The id goes out with the headers: its record exists from then on. Embedded, the store
    // already answers lookups for it, so the headers need not wait for the row.
    if (admitted.request.stream && !this.deps.store.startedRecordsVisibleAtOnce) await admitted.recorded;
    return run;
  }

  /**
   * The prompt's tokens when the upstream did not report them (generation-billing.ts,
   * `estimatePrompt`), for encoders that show usage before the settlement.
   */
  estimatePromptTokens(admitted: AdmittedGeneration): number {
    return admitted.billing.estimatePrompt();
  }

  /**
   * A hit: the stored answer is the run's one route (replay-cached-answer.ts), with no server tools
   * to run and no documents to read; it is billed nothing (generation-billing.ts, `price`).
   */
  private serveFromCache(admitted: AdmittedGeneration, stored: CanonicalResult): RunServices {
    const candidate = createCacheCandidate(admitted.call.model);
    const call: AdmittedGeneration["call"] = {
      request: admitted.call.request,
      model: admitted.call.model,
      provider: candidate.route.provider,
      upstreamModel: candidate.route.upstreamModel,
      maxOutputTokens: admitted.call.maxOutputTokens,
      requestId: admitted.requestId,
      traceHeaders: undefined,
    };
    admitted.candidates = [candidate];
    admitted.call = call;
    admitted.callFor = () => call;
    admitted.serverTools = undefined;
    admitted.documents = undefined;
    admitted.cache!.hit = true;
    return {
      adapters: createReplayRegistry(stored, this.deps.adapters),
      breakers: this.runServices.breakers,
      policy: this.runServices.policy,
      random: this.deps.random,
    };
  }
}
