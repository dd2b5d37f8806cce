/**
 * One path for every generation, whatever the ingress format: admit → record (in progress, streams
 * only) → call the route's adapter → settle (cost, record, balance). Streaming and non-streaming share
 * admission and settlement; `GenerationStream` handles the streamed run.
 */
import type { CanonicalRequest, CanonicalResult } from "../canonical/index.js";
import type { GatewayConfig, ProviderKind } from "../config/types.js";
import { GatewayError, toGatewayError } from "../errors/gateway-error.js";
import type { Settlement } from "../ingress/ingress-format.js";
import type { Reservation, SpendGuard } from "../limits/spend-guard.js";
import { estimateWorstCase } from "../limits/worst-case-cost.js";
import type { Logger } from "../logging/logger.js";
import { computeCostMicroUsd } from "../metering/compute-cost.js";
import { estimateUsage } from "../metering/estimate-usage.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import type {
  ApiKeyWithWorkspace,
  GenerationOutcome,
  GenerationStart,
  IngressFormatName,
  Store,
} from "../storage/types.js";
import type { AdmissionSnapshots } from "./admission-snapshots.js";
import { admitRequest, resolveOutputCap } from "./admit-request.js";
import { GenerationStream } from "./generation-stream.js";
import { createOutcome } from "./settle.js";
import { YIELD_AFTER_MS, yieldToEventLoop } from "./yield-to-event-loop.js";

export interface EngineDependencies {
  config: GatewayConfig;
  store: Store;
  adapters: ReadonlyMap<ProviderKind, ProviderAdapter>;
  logger: Logger;
  /** Spend and rate limits: reserves at admission, settles with the actual cost. */
  spendGuard: SpendGuard;
  /** Keys' limits, allowlists and workspaces, cached and evicted by announcements. */
  admissions: AdmissionSnapshots;
}

export interface GenerationInput {
  requestId: string;
  format: IngressFormatName;
  caller: ApiKeyWithWorkspace;
  request: CanonicalRequest;
  /** performance.now() when the request arrived. */
  startedAt: number;
}

/** A request that passed admission and has its in-progress record. */
export interface AdmittedGeneration extends GenerationInput {
  call: Omit<UpstreamCall, "signal">;
  adapter: ProviderAdapter;
  /** Its worst-case cost held against the key's limits and the balance until settlement. */
  reservation: Reservation;
  /** The usage record's identity; settlement writes it final whether or not it was started. */
  record: GenerationStart;
  /** Settles when the in-progress row is written (streams) or at once; never rejects. */
  recorded: Promise<void>;
}

export class GenerationEngine {
  /** Admitted generations whose outcome is not written yet (see `whenSettled`). */
  private unsettled = 0;
  private settledWaiters: Array<() => void> = [];

  constructor(private readonly deps: EngineDependencies) {}

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
    const { config, admissions, spendGuard } = this.deps;
    const { model, workspace, limits } = await admitRequest(config, admissions, input.caller, input.request);
    const route = model.routes[0];
    const adapter = this.deps.adapters.get(route.provider.kind);
    if (!adapter) {
      throw new GatewayError("internal_error", `No adapter for provider kind "${route.provider.kind}"`);
    }
    const bounding = performance.now();
    const worstCase = estimateWorstCase(
      input.request,
      model.prices,
      resolveOutputCap(model, input.request.maxOutputTokens),
      { rules: adapter.inputRules, contextLength: model.contextLength },
    );
    // A large request took a while to bound: let other requests' I/O in before going on.
    if (performance.now() - bounding > YIELD_AFTER_MS) await yieldToEventLoop();
    const reservation = await spendGuard.admit({
      requestId: input.requestId,
      keyId: input.caller.key.id,
      workspaceId: workspace.id,
      limits,
      requestsPerMinute: limits.requestsPerMinute ?? config.defaultRequestsPerMinute,
      checkBalance: !workspace.invoicing,
      worstCase,
      outputCapAdjustable: input.request.maxOutputTokens === undefined,
    });
    const record: GenerationStart = {
      id: input.requestId,
      workspaceId: workspace.id,
      apiKeyId: input.caller.key.id,
      model: model.slug,
      ingressFormat: input.format,
      source: input.caller.key.source,
      stream: input.request.stream,
      // The reservation's clock decides the day and month the spend belongs to.
      createdAt: new Date(reservation.admittedAt),
    };
    // Only a streamed generation's id reaches the caller before it is final (X-Request-Id with the
    // first frame), so only it needs its in-progress row: written while the upstream is called,
    // awaited before the stream's headers (openStream). Every other record is written once, final.
    const recorded = input.request.stream ? this.recordStart(record) : Promise.resolve();
    this.unsettled++;
    return {
      ...input,
      adapter,
      reservation,
      record,
      recorded,
      call: {
        request: input.request,
        model,
        provider: route.provider,
        upstreamModel: route.upstreamModel,
        // The caller's cap, or what the limits' headroom affords when the caller set none.
        maxOutputTokens: reservation.outputCap,
        requestId: input.requestId,
      },
    };
  }

  /** Non-streaming run. Throws GatewayError after recording the failure. */
  async generate(
    admitted: AdmittedGeneration,
    signal: AbortSignal,
  ): Promise<{ result: CanonicalResult; settlement: Settlement }> {
    let result: CanonicalResult;
    try {
      result = await admitted.adapter.generate({ ...admitted.call, signal });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      if (signal.aborted) {
        // The caller left before any output: the prompt was likely processed upstream, so bill the
        // estimated input (documented in docs/metering.md).
        const usage = estimateUsage(admitted.request, "");
        await this.settle(
          admitted,
          createOutcome(admitted, "cancelled", usage, this.cost(admitted, usage), null),
        );
      } else {
        await this.recordFailure(admitted, error);
      }
      throw error;
    }
    const costMicroUsd = this.cost(admitted, result.usage);
    await this.settle(
      admitted,
      createOutcome(admitted, "ok", result.usage, costMicroUsd, result.finishReason, result.upstreamModel),
    );
    return { result, settlement: { usage: result.usage, costMicroUsd, finishReason: result.finishReason } };
  }

  /**
   * Streaming run. Resolves once the first canonical part arrived (or `firstPartWaitMs` passed),
   * so an upstream that fails at once still gets a plain HTTP error (recorded, then thrown).
   */
  async openStream(
    admitted: AdmittedGeneration,
    signal: AbortSignal,
    firstPartWaitMs: number,
  ): Promise<GenerationStream> {
    const stream = await GenerationStream.open(
      admitted,
      signal,
      {
        settle: (outcome) => this.settle(admitted, outcome),
        cost: (usage) => this.cost(admitted, usage),
      },
      firstPartWaitMs,
    );
    // The id goes out with the headers: its record exists from then on (DESIGN §4). Embedded, the
    // store already answers lookups for it, so the headers need not wait for the row.
    if (!this.deps.store.startedRecordsVisibleAtOnce) await admitted.recorded;
    return stream;
  }

  /**
   * A failed in-progress write does not fail the request: settlement writes the record final (or
   * parks it in the outbox), so only its early visibility is lost.
   */
  private recordStart(record: GenerationStart): Promise<void> {
    return this.deps.store.generations.start(record).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, requestId: record.id }, "in-progress record not written");
    });
  }

  async recordFailure(admitted: AdmittedGeneration, error: GatewayError): Promise<void> {
    const usage = estimateUsage(admitted.request, "");
    const outcome = createOutcome(admitted, "error", { ...usage, inputTokens: 0, outputTokens: 0 }, 0, null);
    await this.settle(admitted, { ...outcome, errorCode: error.code });
  }

  /**
   * What the request is billed: its usage at the model's prices, never more than it reserved.
   * The reservation bounds what the upstream can bill (docs/limits.md), so the cap only acts when
   * an upstream bills past its published rules; the gateway then absorbs the difference, logged,
   * rather than let settled spend pass a limit or the balance.
   */
  private cost(admitted: AdmittedGeneration, usage: CanonicalResult["usage"]): number {
    const cost = computeCostMicroUsd(usage, admitted.call.model.prices);
    const reserved = admitted.reservation.amountMicroUsd;
    if (cost <= reserved) return cost;
    this.deps.logger.warn(
      { requestId: admitted.requestId, costMicroUsd: cost, reservedMicroUsd: reserved, usage },
      "upstream usage costs more than the reservation; billed the reservation",
    );
    return reserved;
  }

  private async settle(admitted: AdmittedGeneration, outcome: GenerationOutcome): Promise<void> {
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
