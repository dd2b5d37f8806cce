/**
 * Admission of one generation, from the request to the admitted generation the run works on: the
 * checks (admit-request.ts), the route candidates, the server tools and documents prepared, the
 * worst case reserved against the limits (SpendGuard.admit), the in-progress record started, and
 * the generation's billing opened. The engine holds one admission for all requests.
 */

import type { Workspace } from "../auth/accounts.js";
import type { CanonicalResult } from "../canonical/index.js";
import type { CatalogModel } from "../catalog/types.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { AdmissionInput, Reservation, SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import { rememberPassthroughText } from "../metering/passthrough-text.js";
import { stringifyInSteps } from "../providers/shared/stringify-in-steps.js";
import { admitRequest, refuseWithoutCredit, resolveOutputCap } from "./admit-request.js";
import type { AdmittedGeneration, GenerationInput } from "./admitted-generation.js";
import { estimateAdmissionWorstCase } from "./estimate-admission-cost.js";
import { type BillingServices, GenerationBilling } from "./generation-billing.js";
import type { GenerationStart } from "./generation-record.js";
import { keepCandidatesWithKeys } from "./keyed-route-candidates.js";
import type { AdapterRegistry, AnswerCache, DocumentPreparer, EngineStore, ServerTools } from "./ports.js";
import { addServerToolDefinitions, createRouteRequests, prepareServerTools } from "./prepare-server-tools.js";
import { findCacheAffinity, orderByAffinity } from "./prompt-cache-affinity.js";
import { readCachePolicy } from "./read-cache-policy.js";
import { listRouteCandidates, type RouteCandidate } from "./route-candidates.js";
import { YIELD_AFTER_MS, yieldToEventLoop } from "./yield-to-event-loop.js";

/** The longest a refused request waits for this instance's pending settlements of its key. */
const SETTLEMENT_WAIT_MS = 5_000;

const isSpendRefusal = (error: unknown): boolean =>
  error instanceof GatewayError &&
  (error.code === "key_limit_exceeded" || error.code === "insufficient_credits");

/** Upstream rounds a request with server tools may make when the config says nothing. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;
/** Calls of one tool a provider running it itself may make per round when the config says nothing. */
export const DEFAULT_MAX_NATIVE_CALLS_PER_ROUND = 5;

/**
 * A response-cache hit's admission: nothing to reserve and no spend limit or balance to check
 * (it costs $0); the key's rate limit and the in-progress record stay.
 */
function freeOfSpend(admission: AdmissionInput): AdmissionInput {
  const { limits, worstCase } = admission;
  return {
    requestId: admission.requestId,
    keyId: admission.keyId,
    workspaceId: admission.workspaceId,
    limits: {
      dailyMicroUsd: null,
      monthlyMicroUsd: null,
      totalMicroUsd: null,
      requestsPerMinute: limits.requestsPerMinute,
      totalResetAt: limits.totalResetAt,
    },
    requestsPerMinute: admission.requestsPerMinute,
    checkBalance: false,
    worstCase: {
      inputTokens: worstCase.inputTokens,
      inputPicoUsd: 0n,
      inputTokenPicoUsd: worstCase.inputTokenPicoUsd,
      outputTokenPicoUsd: worstCase.outputTokenPicoUsd,
      outputCap: worstCase.outputCap,
      amountMicroUsd: 0,
    },
    outputCapAdjustable: false,
    record: admission.record,
  };
}

export interface AdmissionDependencies {
  config: GatewayConfig;
  store: EngineStore;
  adapters: AdapterRegistry;
  logger: Logger;
  spendGuard: SpendGuard;
  serverTools?: ServerTools;
  documents?: DocumentPreparer;
  instanceId?: string;
  /** The exact response cache (absent: nothing is cached). */
  answerCache?: AnswerCache;
  /** What each admitted generation's billing shares. */
  billing: BillingServices;
}

export class GenerationAdmission {
  /** Each catalog model's candidates (see `routesOf`); weak, so a replaced catalog's models go. */
  private readonly routesByModel = new WeakMap<CatalogModel, RouteCandidate[]>();

  constructor(private readonly deps: AdmissionDependencies) {}

  async admit(input: GenerationInput): Promise<AdmittedGeneration> {
    const { config, adapters, answerCache } = this.deps;
    // The bounds below count the passthrough fields' JSON text: made here in steps, once.
    const { passthrough } = input.request;
    if (Object.keys(passthrough).length > 0) {
      rememberPassthroughText(passthrough, await stringifyInSteps(passthrough));
    }
    const { model, models, workspace, limits } = admitRequest(config, input.caller, input.request);
    const cacheTicket = answerCache?.ticketFor(input.request, workspace.id, readCachePolicy(input.caller));
    // A cached request's one lookup starts here, beside the rest of admission and the reservation,
    // so a miss waits for no extra round trip; a hit needs no credit or headroom (`reserve`).
    const lookup = cacheTicket === undefined ? undefined : answerCache!.read(cacheTicket);
    if (lookup === undefined) refuseWithoutCredit(workspace);
    let routes =
      models.length === 1 ? this.routesOf(model) : keepCandidatesWithKeys(listRouteCandidates(models));
    // Same prompt-cache key or prefix, same route: the provider's prompt cache hits.
    if (routes.length > 1 && config.routing?.promptCacheAffinity !== false) {
      const affinity = findCacheAffinity(input.request);
      if (affinity !== undefined) routes = orderByAffinity(routes, affinity);
    }
    const maxNativeCallsPerRound =
      config.serverTools?.maxNativeCallsPerRound ?? DEFAULT_MAX_NATIVE_CALLS_PER_ROUND;
    const prepared = prepareServerTools(
      input.request,
      routes,
      { keyId: input.caller.key.id, workspaceId: workspace.id },
      { serverTools: this.deps.serverTools, adapters, maxNativeCallsPerRound },
    );
    const { session: serverTools, plan } = prepared;
    const documents = this.deps.documents?.prepare(input.request);
    const candidates = plan?.candidates ?? routes;
    const requestFor = createRouteRequests(
      addServerToolDefinitions(input.request, prepared),
      serverTools,
      plan,
    );
    const first = candidates[0];
    const adapter = adapters.get(first.route.provider.kind);
    if (!adapter) {
      throw new GatewayError("internal_error", `No adapter for provider kind "${first.route.provider.kind}"`);
    }
    const bounding = performance.now();
    const worstCase = estimateAdmissionWorstCase(requestFor, candidates, documents, adapters);
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
    const admission = {
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
    };
    const reservation = await this.reserve(admission, workspace, lookup);
    // The reservation's clock decides the day and month the spend belongs to.
    record.createdAt = new Date(reservation.admittedAt);
    // Every admitted request is recorded before its upstream is called, so a crash of this
    // instance leaves a record another one settles. Streams wait for it only before their headers,
    // non-streamed requests before their first upstream call (the engine's `run`). How much it
    // costs is the store's business: a journal line embedded, nothing more with PostgreSQL and
    // Redis (stored with the reservation), a Redis SET there when that could not be done.
    const recorded = this.recordStart(record, reservation.recordStored);
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
    // (CONTRIBUTING.md, "Naming and layout"). `settled` and `billing` follow: the billing reads
    // the generation it bills (its serving route changes with failover).
    const generation: Omit<AdmittedGeneration, "settled" | "billing"> = {
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
      estimatedInputTokens: worstCase.inputTokens,
      deadlineMs: config.maxRequestMs,
      deadline: input.startedAt + config.maxRequestMs,
      maxToolRounds: config.serverTools?.maxRounds ?? DEFAULT_MAX_TOOL_ROUNDS,
      maxNativeCallsPerRound,
      candidates,
      callFor,
      call: callFor(first),
      serverTools,
      documents,
    };
    if (cacheTicket !== undefined) {
      generation.cache = {
        ticket: cacheTicket,
        hit: false,
        maxBytes: answerCache!.maxEntryBytes,
        lookup: lookup!,
      };
    }
    const billing = new GenerationBilling(generation, this.deps.billing);
    return Object.assign(generation, { settled: billing.settled, billing });
  }

  /**
   * The worst case reserved against the key's limits and the workspace's balance. A cached request
   * refused for its spend (or a workspace without credit) is asked again once its lookup is in:
   * a hit costs $0, so it is admitted with nothing reserved and no spend limit or balance checked,
   * only its rate-limit slot taken. A miss keeps the refusal. The lookup is awaited only then, so
   * an admitted miss never waits for it here.
   */
  private async reserve(
    admission: AdmissionInput,
    workspace: Workspace,
    lookup: Promise<CanonicalResult | undefined> | undefined,
  ): Promise<Reservation> {
    const { spendGuard } = this.deps;
    if (lookup !== undefined) {
      try {
        refuseWithoutCredit(workspace);
      } catch (error) {
        if ((await lookup) === undefined) throw error;
        return spendGuard.admit(freeOfSpend(admission));
      }
    }
    const settledMark = this.deps.billing.pending.mark();
    return spendGuard.admit(admission).catch(async (error: unknown) => {
      if (!isSpendRefusal(error)) throw error;
      if (lookup !== undefined && (await lookup) !== undefined) {
        return spendGuard.admit(freeOfSpend(admission));
      }
      // Refused while this instance still settles the key's finished generations (their answers
      // ended before their settlement): once those are done the headroom is what their real cost
      // left, so ask once more; so too when one finished while this admission was asked (the
      // limit store may have run it before that settlement). A refusal with nothing pending or
      // finished meanwhile stands.
      const waited = await this.deps.billing.pending.waitFor(
        admission.keyId,
        admission.workspaceId,
        SETTLEMENT_WAIT_MS,
        settledMark,
      );
      if (!waited) throw error;
      return spendGuard.admit(admission);
    });
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

  /**
   * A failed in-progress write does not fail the request: settlement writes the record final (or
   * parks it in the outbox), so only its early visibility is lost.
   */
  private recordStart(record: GenerationStart, sharedWithReservation: boolean): Promise<void> {
    return this.deps.store.generations.start(record, sharedWithReservation).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, requestId: record.id }, "in-progress record not written");
    });
  }
}
