import type {
  CanonicalRequest,
  CanonicalResult,
  LostPart,
  ServerToolActivation,
  ServerToolId,
} from "../canonical/index.js";
import type { CatalogModel } from "../catalog/types.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import {
  addFixedCost,
  computeReservation,
  estimateWorstCase,
  type WorstCase,
} from "../limits/worst-case-cost.js";
import type { Logger } from "../logging/logger.js";
import { boundInputTokens } from "../metering/bound-input-tokens.js";
import { computeRoundsCostMicroUsd } from "../metering/compute-cost.js";
import { rememberPassthroughText } from "../metering/passthrough-text.js";
import { type ModelPrices, selectPricesInForce } from "../metering/prices.js";
import { type ProviderAdapter, routeReadsPdf } from "../providers/provider-adapter.js";
import { stringifyInSteps } from "../providers/shared/stringify-in-steps.js";
import { admitRequest, resolveOutputCap } from "./admit-request.js";
import type {
  AdmittedGeneration,
  ExecutedToolCall,
  GenerationInput,
  SettledGeneration,
} from "./admitted-generation.js";
import { addNativeRoundCost } from "./bound-native-round.js";
import {
  type BreakerPolicy,
  type BreakerState,
  CircuitBreakers,
  DEFAULT_BREAKER_POLICY,
} from "./circuit-breaker.js";
import type { GenerationAttempt, GenerationOutcome, GenerationStart } from "./generation-record.js";
import { GenerationRun, type RunHooks, type RunServices } from "./generation-run.js";
import { keepCandidatesWithKeys } from "./keyed-route-candidates.js";
import { type MeteredUsage, type MeterInput, meterUsage } from "./meter-usage.js";
import { type NativeToolPlan, planNativeTools } from "./plan-native-tools.js";
import type {
  AdapterRegistry,
  AnswerCache,
  DocumentPreparer,
  DocumentSession,
  EngineStore,
  ServerToolCaller,
  ServerToolSession,
  ServerTools,
} from "./ports.js";
import { findCacheAffinity, orderByAffinity } from "./prompt-cache-affinity.js";
import { readCachePolicy } from "./read-cache-policy.js";
import { createCacheCandidate, createReplayRegistry } from "./replay-cached-answer.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry-policy.js";
import { listRouteCandidates, type RouteCandidate } from "./route-candidates.js";
import { YIELD_AFTER_MS, yieldToEventLoop } from "./yield-to-event-loop.js";

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

/** Upstream rounds a request with server tools may make when the config says nothing. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;
/** Calls of one tool a provider running it itself may make per round when the config says nothing. */
export const DEFAULT_MAX_NATIVE_CALLS_PER_ROUND = 5;

/**
 * One candidate's worst case. A route that gets the documents' text is bounded by the rest of the
 * prompt plus the most text they can give (whatever their pages would bill as files), and the
 * price of reading them is reserved with its input.
 */
function estimateCandidate(
  request: CanonicalRequest,
  model: CatalogModel,
  adapter: ProviderAdapter,
  documents: DocumentSession | undefined,
): WorstCase {
  const outputCap = resolveOutputCap(model, request.maxOutputTokens);
  const bounds = { rules: adapter.inputRules, contextLength: model.contextLength };
  // Admission is now: the prices in force now are the ones the request will be billed at.
  const prices = selectPricesInForce(model.prices, Date.now());
  if (documents === undefined || !documents.sendsText(routeReadsPdf(adapter, model))) {
    return estimateWorstCase(request, prices, outputCap, bounds);
  }
  const worst = estimateWorstCase(documents.withoutDocuments(request), prices, outputCap, {
    rules: bounds.rules,
    contextLength: bounds.contextLength,
    extraTokens: documents.maxTextTokens,
  });
  return addFixedCost(worst, documents.maxCostMicroUsd);
}

/** The prices in force when the generation was admitted: what it was reserved and is billed at. */
function selectAdmittedPrices(admitted: AdmittedGeneration): ModelPrices {
  return selectPricesInForce(admitted.call.model.prices, admitted.record.createdAt?.getTime() ?? Date.now());
}

/** What `settle` hands back at once: the run goes on without waiting for the store. */
const SETTLED: Promise<void> = Promise.resolve();

/** How an admitted generation's `settled` is resolved: a key only this module holds. */
const ANNOUNCE_SETTLED = Symbol("announce settled");
type Announcing = AdmittedGeneration & {
  [ANNOUNCE_SETTLED]?: (settled: SettledGeneration) => void;
};

export class GenerationEngine {
  /** Admitted generations whose outcome is not written yet (see `whenSettled`). */
  private unsettled = 0;
  private settledWaiters: Array<() => void> = [];

  private readonly breakers: CircuitBreakers;
  private readonly retryPolicy: RetryPolicy;
  /** The catalog's routes, each once (as its breaker knows it). */
  private catalogRoutes?: RouteCandidate[];
  /** Each catalog model's candidates (see `routesOf`); weak, so a replaced catalog's models go. */
  private readonly routesByModel = new WeakMap<CatalogModel, RouteCandidate[]>();
  /** What every run is given (generation-run.ts): made once, not per request. */
  private readonly runHooks: RunHooks = {
    settle: (admitted, outcome, served, toolCalls) => this.settle(admitted, outcome, served, toolCalls),
    cost: (admitted, rounds, toolMicroUsd) => this.cost(admitted, rounds, toolMicroUsd),
    meter: (admitted, input, request) => this.meter(admitted, input, request),
    reserveRound: (admitted, spent, toolMicroUsd, toolsMicroUsd, next) =>
      this.reserveRound(admitted, spent, toolMicroUsd, toolsMicroUsd, next),
    keepAnswer: (admitted, result) => this.keepAnswer(admitted, result),
  };
  private readonly runServices: RunServices;

  constructor(private readonly deps: EngineDependencies) {
    const routing = deps.config.routing;
    this.retryPolicy =
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
      policy: this.retryPolicy,
      random: deps.random,
    };
  }

  /**
   * One catalog model's route candidates (a request without alternatives): the list depends on
   * the model alone, so it is made once per model, not per request. Routes without their
   * provider's key are left out (keyed-route-candidates.ts).
   */
  private routesOf(model: CatalogModel): RouteCandidate[] {
    let routes = this.routesByModel.get(model);
    if (routes === undefined) {
      routes = listRouteCandidates([model]);
      this.routesByModel.set(model, routes);
    }
    return keepCandidatesWithKeys(routes);
  }

  /** Admitted generations not settled yet: each holds its reservation on this instance. */
  get generationsInFlight(): number {
    return this.unsettled;
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
    if (this.unsettled === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.settledWaiters = this.settledWaiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      this.settledWaiters.push(wake);
    });
  }

  async admit(input: GenerationInput): Promise<AdmittedGeneration> {
    const { config, spendGuard } = this.deps;
    // The bounds below count the passthrough fields' JSON text: made here in steps, once.
    const { passthrough } = input.request;
    if (Object.keys(passthrough).length > 0) {
      rememberPassthroughText(passthrough, await stringifyInSteps(passthrough));
    }
    const { model, models, workspace, limits } = admitRequest(config, input.caller, input.request);
    let routes =
      models.length === 1 ? this.routesOf(model) : keepCandidatesWithKeys(listRouteCandidates(models));
    // Same prompt-cache key or prefix, same route: the provider's prompt cache hits.
    if (routes.length > 1 && config.routing?.promptCacheAffinity !== false) {
      const affinity = findCacheAffinity(input.request);
      if (affinity !== undefined) routes = orderByAffinity(routes, affinity);
    }
    const {
      session: serverTools,
      plan,
      leftOut,
    } = this.prepareServerTools(input.request, routes, {
      keyId: input.caller.key.id,
      workspaceId: workspace.id,
    });
    const documents = this.deps.documents?.prepare(input.request);
    const cacheTicket = this.deps.answerCache?.ticketFor(
      input.request,
      workspace.id,
      readCachePolicy(input.caller),
    );
    // The model is offered the tools the gateway runs as functions of its own.
    let upstreamRequest = input.request;
    if (serverTools !== undefined) {
      upstreamRequest = { ...input.request };
      upstreamRequest.tools = [...input.request.tools, ...serverTools.definitions];
    }
    // A gateway without server tools: the client's own optional ones are left out on every route.
    if (leftOut !== undefined) {
      upstreamRequest = { ...upstreamRequest };
      upstreamRequest.leftOut = leftOut.map(describeLeftOut);
    }
    const candidates = plan?.candidates ?? routes;
    const requestFor = createRouteRequests(upstreamRequest, serverTools, plan);
    const first = candidates[0];
    const adapter = this.deps.adapters.get(first.route.provider.kind);
    if (!adapter) {
      throw new GatewayError("internal_error", `No adapter for provider kind "${first.route.provider.kind}"`);
    }
    const bounding = performance.now();
    const worstCase = this.estimateWorstCase(requestFor, candidates, documents);
    // A large request took a while to bound: let other requests' I/O in before going on.
    if (performance.now() - bounding > YIELD_AFTER_MS) await yieldToEventLoop();
    const record: GenerationStart = {
      id: input.requestId,
      workspaceId: workspace.id,
      apiKeyId: input.caller.key.id,
      model: model.slug,
      ingressFormat: input.format,
      source: input.caller.key.source,
      stream: input.request.stream,
      createdAt: undefined,
      estimatedInputTokens: worstCase.inputTokens,
      instanceId: this.deps.instanceId,
    };
    if (input.sessionId !== undefined) record.sessionId = input.sessionId;
    if (input.client !== undefined) record.client = input.client;
    const reservation = await spendGuard.admit({
      requestId: input.requestId,
      keyId: input.caller.key.id,
      workspaceId: workspace.id,
      limits,
      requestsPerMinute: limits.requestsPerMinute ?? config.defaultRequestsPerMinute,
      checkBalance: !workspace.invoicing,
      worstCase,
      outputCapAdjustable: input.request.maxOutputTokens === undefined,
      // Distributed: the in-progress record goes with the reservation, in the same round trip.
      record: this.deps.store.generations.admissionRecord?.(record),
    });
    // The reservation's clock decides the day and month the spend belongs to.
    record.createdAt = new Date(reservation.admittedAt);
    // Every admitted request is recorded before its upstream is called, so a crash of this
    // instance leaves a record another one settles. Streams wait for it only before their headers,
    // non-streamed requests before their first upstream call (`run`). How much it costs
    // is the store's business: a journal line embedded, nothing more with PostgreSQL and Redis
    // (stored with the reservation), a Redis SET there when that could not be done.
    const recorded = this.recordStart(record, reservation.recordStored);
    this.unsettled++;
    let announceSettled!: (settled: SettledGeneration) => void;
    const settled = new Promise<SettledGeneration>((resolve) => {
      announceSettled = resolve;
    });
    const callFor = (candidate: RouteCandidate): AdmittedGeneration["call"] => ({
      request: requestFor(candidate),
      model: candidate.model,
      provider: candidate.route.provider,
      upstreamModel: candidate.route.upstreamModel,
      // The caller's cap, or what the limits' headroom affords when the caller set none; never
      // above what the candidate's model can produce.
      maxOutputTokens: Math.min(
        reservation.outputCap,
        resolveOutputCap(candidate.model, input.request.maxOutputTokens),
      ),
      requestId: input.requestId,
      traceHeaders: undefined,
    });
    // Every field written out, not `...input` first: a literal never starts with a spread
    // (CONTRIBUTING.md, "Naming and layout").
    const admitted: Announcing = {
      requestId: input.requestId,
      format: input.format,
      caller: input.caller,
      request: input.request,
      startedAt: input.startedAt,
      trace: input.trace,
      sessionId: input.sessionId,
      client: input.client,
      adapter,
      reservation,
      record,
      recorded,
      settled,
      estimatedInputTokens: worstCase.inputTokens,
      deadlineMs: config.maxRequestMs,
      deadline: input.startedAt + config.maxRequestMs,
      maxToolRounds: config.serverTools?.maxRounds ?? DEFAULT_MAX_TOOL_ROUNDS,
      maxNativeCallsPerRound:
        config.serverTools?.maxNativeCallsPerRound ?? DEFAULT_MAX_NATIVE_CALLS_PER_ROUND,
      candidates,
      callFor,
      call: callFor(first),
      serverTools,
      documents,
    };
    if (cacheTicket !== undefined) {
      admitted.cache = { ticket: cacheTicket, hit: false, maxBytes: this.deps.answerCache!.maxEntryBytes };
    }
    admitted[ANNOUNCE_SETTLED] = announceSettled;
    return admitted;
  }

  /**
   * The request's activated server tools, checked against this gateway's configuration, and where
   * each runs per route (plan-native-tools.ts); the function names of those the gateway runs may
   * not clash with the caller's own tools.
   */
  private prepareServerTools(
    request: CanonicalRequest,
    candidates: readonly RouteCandidate[],
    caller: ServerToolCaller,
  ): { session?: ServerToolSession; plan?: NativeToolPlan; leftOut?: ServerToolActivation[] } {
    if (request.serverTools.length === 0) return {};
    const serverTools = this.deps.serverTools;
    const droppable = findDroppable(request.serverTools, serverTools);
    if (serverTools === undefined) {
      const first = request.serverTools.find((activation) => !droppable.has(activation.id));
      if (first === undefined) return { leftOut: request.serverTools };
      throw GatewayError.invalidRequest(
        `Server tool "${first.id}" is not configured on this gateway`,
        first.param ?? "tools",
      );
    }
    const plan = planNativeTools({
      request,
      candidates,
      adapters: this.deps.adapters,
      serverTools,
      maxCallsPerRound:
        this.deps.config.serverTools?.maxNativeCallsPerRound ?? DEFAULT_MAX_NATIVE_CALLS_PER_ROUND,
      droppable,
    });
    // The gateway prepares only what it runs: a droppable tool runs at a provider or nowhere.
    let runHere = request;
    if (droppable.size > 0) {
      runHere = Object.assign({}, request);
      runHere.serverTools = request.serverTools.filter((activation) => !droppable.has(activation.id));
    }
    const session = serverTools.prepare(runHere, plan.nativeEverywhere, caller);
    // Only `pdf` activated: it reads file parts before the call (`documents`), no tool loop runs.
    const native = plan.candidates.some((candidate) => plan.toolsFor(candidate).length > 0);
    if (session.definitions.length === 0 && !native) return { plan };
    // A provider's own tool carries the tool's name too (`web_search`), so it may not clash either.
    const names = [...session.definitions.map((definition) => definition.name), ...plan.nativeEverywhere];
    for (const name of names) {
      const clash = request.tools.find((tool) => tool.name === name);
      if (clash !== undefined) {
        const param = clash.param ?? `tools[${request.tools.indexOf(clash)}]`;
        throw GatewayError.invalidRequest(
          `${param} is named "${name}", the name of the server tool this request activates; rename the function`,
          param,
        );
      }
    }
    return { session, plan };
  }

  /**
   * The reservation covers the dearest candidate: the largest prompt bound any of their upstreams
   * can bill, at the dearest input and output rates among them, with the largest output cap. One
   * bound per distinct model and provider kind (routes of one kind bound the prompt alike).
   */
  private estimateWorstCase(
    requestFor: (candidate: RouteCandidate) => CanonicalRequest,
    candidates: readonly RouteCandidate[],
    documents: DocumentSession | undefined,
  ): WorstCase {
    const estimate = (candidate: RouteCandidate, adapter: ProviderAdapter): WorstCase => {
      const request = requestFor(candidate);
      const worst = estimateCandidate(request, candidate.model, adapter, documents);
      return addNativeRoundCost(worst, request, candidate.model);
    };
    if (candidates.length === 1) {
      const { route } = candidates[0];
      const adapter = this.deps.adapters.get(route.provider.kind);
      if (!adapter)
        throw new GatewayError("internal_error", `No adapter for provider kind "${route.provider.kind}"`);
      return estimate(candidates[0], adapter);
    }
    let combined: WorstCase | undefined;
    const bounded = new Set<string>();
    for (const candidate of candidates) {
      const { model, route } = candidate;
      // Routes of one kind bound the prompt alike, unless their providers run different tools.
      const native =
        requestFor(candidate)
          .nativeServerTools?.map((tool) => tool.tool)
          .join(",") ?? "";
      const key = `${model.slug} ${route.provider.kind} ${native}`;
      if (bounded.has(key)) continue;
      bounded.add(key);
      const adapter = this.deps.adapters.get(route.provider.kind);
      if (!adapter) continue;
      const worst = estimate(candidate, adapter);
      if (combined === undefined) {
        combined = worst;
        continue;
      }
      combined = {
        inputTokens: Math.max(combined.inputTokens, worst.inputTokens),
        inputPicoUsd: combined.inputPicoUsd > worst.inputPicoUsd ? combined.inputPicoUsd : worst.inputPicoUsd,
        inputTokenPicoUsd:
          combined.inputTokenPicoUsd > worst.inputTokenPicoUsd
            ? combined.inputTokenPicoUsd
            : worst.inputTokenPicoUsd,
        outputTokenPicoUsd:
          combined.outputTokenPicoUsd > worst.outputTokenPicoUsd
            ? combined.outputTokenPicoUsd
            : worst.outputTokenPicoUsd,
        outputCap: Math.max(combined.outputCap, worst.outputCap),
        amountMicroUsd: 0,
      };
      combined.amountMicroUsd = computeReservation(combined, combined.outputCap);
    }
    if (combined === undefined)
      throw new GatewayError("internal_error", "No adapter for any route of this model");
    return combined;
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
    signal: AbortSignal,
    firstPartWaitMs: number,
  ): Promise<GenerationRun> {
    // Non-streamed requests wait for the record before the upstream call; streams only before
    // their headers, so the first attempt overlaps the write.
    if (!admitted.request.stream) await admitted.recorded;
    // The one look at the response cache, before any upstream call; a hit is the run's only route.
    const stored =
      admitted.cache === undefined ? undefined : await this.deps.answerCache?.read(admitted.cache.ticket);
    const services = stored === undefined ? this.runServices : this.serveFromCache(admitted, stored);
    const run = await GenerationRun.start(admitted, signal, this.runHooks, services, {
      firstPartWaitMs,
    });
    // The id goes out with the headers: its record exists from then on. Embedded, the store
    // already answers lookups for it, so the headers need not wait for the row.
    if (admitted.request.stream && !this.deps.store.startedRecordsVisibleAtOnce) await admitted.recorded;
    return run;
  }

  /**
   * A hit: the stored answer is the run's one route (replay-cached-answer.ts), with no server tools
   * to run and no documents to read; it is billed nothing (`cost`).
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
      breakers: this.breakers,
      policy: this.retryPolicy,
      random: this.deps.random,
    };
  }

  /** A miss's complete answer goes into the cache; a hit's is already there. */
  private async keepAnswer(admitted: AdmittedGeneration, result: CanonicalResult): Promise<void> {
    if (admitted.cache === undefined || admitted.cache.hit) return;
    await this.deps.answerCache?.write(admitted.cache.ticket, result);
  }

  /**
   * A failed in-progress write does not fail the request: settlement writes the record final (or
   * parks it in the outbox), so only its early visibility is lost.
   */
  private recordStart(record: GenerationStart, sharedWithReservation: boolean): Promise<void> {
    return this.deps.store.generations.start(record, sharedWithReservation).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, requestId: record.id }, "in-progress record not written");
    });
  }

  /**
   * What the request is billed: its usage at the model's prices, never more than it reserved.
   * The reservation bounds what the upstream can bill (docs/limits.md), so the cap only acts when
   * an upstream bills past its published rules; the gateway then absorbs the difference, logged,
   * rather than let settled spend pass a limit or the balance.
   */
  private cost(
    admitted: AdmittedGeneration,
    rounds: readonly CanonicalResult["usage"][],
    toolMicroUsd: number,
  ): number {
    // A cached answer called no provider: it costs nothing.
    if (admitted.cache?.hit === true) return 0;
    const cost = computeRoundsCostMicroUsd(rounds, selectAdmittedPrices(admitted)) + toolMicroUsd;
    const reserved = admitted.reservation.amountMicroUsd;
    if (cost <= reserved) return cost;
    this.deps.logger.warn(
      { requestId: admitted.requestId, costMicroUsd: cost, reservedMicroUsd: reserved, usage: rounds },
      "upstream usage costs more than the reservation; billed the reservation",
    );
    return reserved;
  }

  /**
   * Before a tool round: the reservation must cover what the run spent so far, the calls about to
   * run and the next round's worst case (its prompt, the tools' results included, and its output
   * cap at the serving model's prices). Only the shortfall is reserved; a limit store that cannot
   * be reached counts as no headroom (the answer ends rather than run unreserved).
   */
  private async reserveRound(
    admitted: AdmittedGeneration,
    spent: readonly CanonicalResult["usage"][],
    toolMicroUsd: number,
    toolsMicroUsd: number,
    next: { request: CanonicalRequest; resultTokens: number } | undefined,
  ): Promise<boolean> {
    const { model } = admitted.call;
    const prices = selectAdmittedPrices(admitted);
    let needed = computeRoundsCostMicroUsd(spent, prices) + toolMicroUsd + toolsMicroUsd;
    if (next !== undefined) {
      // The tools' results join the next prompt, so they count toward the tier it can reach.
      const worst = addNativeRoundCost(
        estimateWorstCase(next.request, prices, admitted.call.maxOutputTokens, {
          rules: admitted.adapter.inputRules,
          contextLength: model.contextLength,
          extraTokens: next.resultTokens,
        }),
        next.request,
        model,
      );
      needed += worst.amountMicroUsd;
    }
    const shortfall = needed - admitted.reservation.amountMicroUsd;
    if (shortfall <= 0) return true;
    try {
      return await admitted.reservation.extend(shortfall);
    } catch (error) {
      this.deps.logger.warn(
        { err: error, requestId: admitted.requestId },
        "could not extend the reservation for a server-tool round",
      );
      return false;
    }
  }

  /**
   * The prompt's tokens when the upstream did not report them: text counted with o200k whatever
   * the provider kind (one estimate for one prompt), media at the kind's per-image and per-page
   * bounds, never above the bound the reservation was made with. Computed only when needed: the
   * reservation itself counts non-OpenAI text by its bytes, without tokenizing.
   */
  estimatePromptTokens(admitted: AdmittedGeneration): number {
    return this.estimatePrompt(admitted);
  }

  /** estimatePromptTokens, or the prompt of a later round of the tool loop (`roundRequest`). */
  private estimatePrompt(admitted: AdmittedGeneration, roundRequest?: CanonicalRequest): number {
    const { model } = admitted.call;
    const request = roundRequest ?? admitted.call.request;
    const rules = { ...admitted.adapter.inputRules };
    rules.tokenizer = "o200k";
    const estimate = boundInputTokens(request, rules, model.contextLength);
    // A later round of the tool loop reserved its own bound; the first one's was admission's.
    return roundRequest === undefined ? Math.min(estimate, admitted.estimatedInputTokens) : estimate;
  }

  /** meter-usage.ts with this generation's cap and prompt estimate; an over-cap report is logged. */
  private meter(
    admitted: AdmittedGeneration,
    input: Pick<MeterInput, "reported" | "finished" | "estimateOutputTokens">,
    roundRequest?: CanonicalRequest,
  ): MeteredUsage {
    const metered = meterUsage({
      reported: input.reported,
      finished: input.finished,
      estimateOutputTokens: input.estimateOutputTokens,
      estimateInputTokens: () => this.estimatePrompt(admitted, roundRequest),
      outputCap: admitted.call.maxOutputTokens,
    });
    if (metered.capped) {
      this.deps.logger.warn(
        {
          requestId: admitted.requestId,
          provider: admitted.call.provider.id,
          reportedOutputTokens: input.reported?.outputTokens,
          outputCap: admitted.call.maxOutputTokens,
        },
        "upstream reported more output than the cap it was sent; billed at the cap",
      );
    }
    return metered;
  }

  /**
   * The numbers are final once the run calls this: its answer's last bytes need not wait for the
   * store or the counters, so both are handed over here and leave afterwards (in batches, the
   * store's business), in the order that keeps the counters exact. `whenSettled` still waits for
   * them, so a shutdown does not close the store under them.
   */
  private settle(
    admitted: AdmittedGeneration,
    outcome: GenerationOutcome,
    served: GenerationAttempt | undefined,
    toolCalls: ExecutedToolCall[],
  ): Promise<void> {
    // Whoever reports on the request (its log line, metrics) need not wait for the store either.
    const announcing = admitted as Announcing;
    const settledGeneration: SettledGeneration = { outcome, served, toolCalls };
    if (admitted.cache !== undefined) settledGeneration.cache = admitted.cache.hit ? "hit" : "miss";
    announcing[ANNOUNCE_SETTLED]?.(settledGeneration);
    announcing[ANNOUNCE_SETTLED] = undefined;
    const recorded = this.record(admitted, outcome);
    // During a database outage the record is parked on disk before the answer ends, as before.
    return this.deps.store.generations.answerWaitsForRecord?.() === true ? recorded : SETTLED;
  }

  /** Writes the final record, then settles the reservation with its cost; never rejects. */
  private async record(admitted: AdmittedGeneration, outcome: GenerationOutcome): Promise<void> {
    // A start still being stored (a stream that failed at once) must land first, or it would be
    // left behind (in Redis, in the sweep's index) after its final record.
    await admitted.recorded;
    try {
      await this.deps.store.generations.finish(admitted.requestId, outcome, admitted.record);
    } catch (error) {
      // Never lose the usage silently: the log line carries everything needed to replay it.
      this.deps.logger.error(
        { err: error, requestId: admitted.requestId, outcome },
        "failed to record generation outcome",
      );
    }
    this.unsettled--;
    if (this.unsettled === 0 && this.settledWaiters.length > 0) {
      const waiters = this.settledWaiters;
      this.settledWaiters = [];
      for (const wake of waiters) wake();
    }
    // After Postgres, never before: a counter seeded in between must not miss this cost
    // (src/limits/seed-counters.ts relies on this order).
    await admitted.reservation.settle(outcome.costMicroUsd);
  }
}

/**
 * The first round's request as each candidate is sent it: a route whose provider runs some of the
 * tools itself gets them as `nativeServerTools` and not their gateway definitions.
 */
function createRouteRequests(
  request: CanonicalRequest,
  session: ServerToolSession | undefined,
  plan: NativeToolPlan | undefined,
): (candidate: RouteCandidate) => CanonicalRequest {
  if (plan === undefined) return () => request;
  const routed = new Map<RouteCandidate, CanonicalRequest>();
  return (candidate) => {
    let built = routed.get(candidate);
    if (built !== undefined) return built;
    const native = plan.toolsFor(candidate);
    const dropped = plan.droppedFor(candidate);
    if (native.length === 0 && dropped.length === 0) {
      built = request;
    } else {
      built = { ...request };
      if (native.length > 0) {
        const runsThere = new Set<string>(native.map((tool) => tool.tool));
        built.tools = request.tools.filter((tool) => !runsThere.has(session?.toolNamed(tool.name) ?? ""));
        built.nativeServerTools = native;
      }
      if (dropped.length > 0) built.leftOut = [...(request.leftOut ?? []), ...dropped.map(describeLeftOut)];
    }
    routed.set(candidate, built);
    return built;
  };
}

/**
 * The optional activations this gateway cannot run (a client's default tool, never one asked
 * through `plugins`, with no `engine` option): not configured here, or no server tools at all.
 */
function findDroppable(
  activations: readonly ServerToolActivation[],
  serverTools: ServerTools | undefined,
): Set<ServerToolId> {
  const droppable = new Set<ServerToolId>();
  for (const activation of activations) {
    const engine = activation.parameters?.engine;
    if (activation.optional !== true || (engine !== undefined && engine !== null)) continue;
    if (serverTools?.runs(activation.id) !== true) droppable.add(activation.id);
  }
  return droppable;
}

/** `tools[7](web_search)`: how the drop report names a server tool a route goes without. */
function describeLeftOut(activation: ServerToolActivation): LostPart {
  return { param: activation.param ?? "tools", kind: activation.id };
}
