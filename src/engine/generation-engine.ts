/**
 * One path for every generation, whatever the ingress format: admit → record (in progress) → call
 * the route's adapter → settle (usage, cost, record, balance). Streaming and non-streaming share
 * admission and settlement; `GenerationStream` handles the streamed run. Every generation ends by
 * `config.maxRequestMs` after it arrived, so a record still in progress past that belongs to an
 * instance that died (interrupted-sweep.ts).
 */

import type { ApiKeyWithWorkspace } from "../auth/accounts.js";
import { type CanonicalRequest, type CanonicalResult, createEmptyUsage } from "../canonical/index.js";
import type { IngressFormatName } from "../canonical/ingress-format-name.js";
import type { Settlement } from "../canonical/settlement.js";
import type { GatewayConfig, ProviderKind } from "../config/types.js";
import { GatewayError, toGatewayError } from "../errors/gateway-error.js";
import type { Reservation, SpendGuard } from "../limits/spend-guard.js";
import { estimateWorstCase } from "../limits/worst-case-cost.js";
import type { Logger } from "../logging/logger.js";
import { boundInputTokens } from "../metering/bound-input-tokens.js";
import { computeCostMicroUsd } from "../metering/compute-cost.js";
import { estimateTextTokens } from "../metering/estimate-usage.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import type { AdmissionSnapshots } from "./admission-snapshots.js";
import { admitRequest, resolveOutputCap } from "./admit-request.js";
import { createDeadlineError } from "./create-deadline-error.js";
import type { GenerationOutcome, GenerationStart } from "./generation-record.js";
import { GenerationStream } from "./generation-stream.js";
import {
  collectResultText,
  type MeteredUsage,
  type MeterInput,
  meterPromptOnly,
  meterUsage,
} from "./meter-usage.js";
import type { EngineStore as Store } from "./ports.js";
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
  /** Settles when the in-progress record is stored (store-dependent: see `recordStart`); never rejects. */
  recorded: Promise<void>;
  /** Admission's estimate of the prompt (tokens, media included), billed when no usage tells better. */
  estimatedInputTokens: number;
  /** The longest the generation may run, and when that is over (performance.now() time). */
  deadlineMs: number;
  deadline: number;
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
      estimatedInputTokens: worstCase.inputTokens,
    };
    // Every admitted request is recorded before its upstream is called, so a crash of this
    // instance leaves a record another one settles. Streams wait for it only before their headers
    // (openStream), non-streamed requests before their upstream call (generate). How much it costs
    // is the store's business: a journal line embedded, a Redis SET with PostgreSQL and Redis.
    const recorded = this.recordStart(record);
    this.unsettled++;
    return {
      ...input,
      adapter,
      reservation,
      record,
      recorded,
      estimatedInputTokens: worstCase.inputTokens,
      deadlineMs: config.maxRequestMs,
      deadline: input.startedAt + config.maxRequestMs,
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
    await admitted.recorded;
    if (signal.aborted) return this.settleUnsent(admitted, signal);
    let result: CanonicalResult;
    const controller = new AbortController();
    const onClientGone = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onClientGone, { once: true });
    const deadline = setTimeout(
      () => controller.abort(createDeadlineError(admitted.deadlineMs)),
      Math.max(0, admitted.deadline - performance.now()),
    );
    try {
      result = await admitted.adapter.generate({ ...admitted.call, signal: controller.signal });
    } catch (thrown) {
      const error = toGatewayError(thrown);
      if (signal.aborted) {
        // The caller left before any output: the prompt was likely processed upstream, so bill the
        // estimated input (documented in docs/metering.md).
        const metered = meterPromptOnly(this.estimatePrompt(admitted));
        await this.settle(admitted, this.createMeteredOutcome(admitted, "cancelled", metered, null));
      } else {
        await this.recordFailure(admitted, error);
      }
      throw error;
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener("abort", onClientGone);
    }
    const metered = this.meter(admitted, {
      reported: result.usage,
      finished: true,
      estimateOutputTokens: () => estimateTextTokens(collectResultText(result)),
    });
    const outcome = this.createMeteredOutcome(
      admitted,
      "ok",
      metered,
      result.finishReason,
      result.upstreamModel,
    );
    await this.settle(admitted, outcome);
    return {
      result,
      settlement: {
        usage: metered.usage,
        costMicroUsd: outcome.costMicroUsd,
        finishReason: result.finishReason,
      },
    };
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
    if (signal.aborted) return this.settleUnsent(admitted, signal);
    const stream = await GenerationStream.open(
      admitted,
      signal,
      {
        settle: (outcome) => this.settle(admitted, outcome),
        cost: (usage) => this.cost(admitted, usage),
        meter: (input) => this.meter(admitted, input),
      },
      { firstPartWaitMs, deadline: admitted.deadline },
    );
    // The id goes out with the headers: its record exists from then on. Embedded, the
    // store already answers lookups for it, so the headers need not wait for the row.
    if (!this.deps.store.startedRecordsVisibleAtOnce) await admitted.recorded;
    return stream;
  }

  /** The caller left before the upstream was called: nothing was sent, nothing is billed. */
  private async settleUnsent(admitted: AdmittedGeneration, signal: AbortSignal): Promise<never> {
    await this.settle(admitted, createOutcome(admitted, "cancelled", createEmptyUsage(), 0, null));
    throw toGatewayError(signal.reason);
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
    const outcome = createOutcome(admitted, "error", createEmptyUsage(), 0, null);
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

  /**
   * The prompt's tokens when the upstream did not report them: text counted with o200k whatever
   * the provider kind (one estimate for one prompt), media at the kind's per-image and per-page
   * bounds, never above the bound the reservation was made with. Computed only when needed: the
   * reservation itself counts non-OpenAI text by its bytes, without tokenizing.
   */
  private estimatePrompt(admitted: AdmittedGeneration): number {
    const { request, model } = admitted.call;
    const estimate = boundInputTokens(
      request,
      { ...admitted.adapter.inputRules, tokenizer: "o200k" },
      model.contextLength,
    );
    return Math.min(estimate, admitted.estimatedInputTokens);
  }

  /** meter-usage.ts with this generation's cap and prompt estimate; an over-cap report is logged. */
  private meter(
    admitted: AdmittedGeneration,
    input: Pick<MeterInput, "reported" | "finished" | "estimateOutputTokens">,
  ): MeteredUsage {
    const metered = meterUsage({
      ...input,
      estimateInputTokens: () => this.estimatePrompt(admitted),
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

  private createMeteredOutcome(
    admitted: AdmittedGeneration,
    status: GenerationOutcome["status"],
    metered: MeteredUsage,
    finishReason: CanonicalResult["finishReason"] | null,
    upstreamModel?: string,
  ): GenerationOutcome {
    const cost = this.cost(admitted, metered.usage);
    const outcome = createOutcome(admitted, status, metered.usage, cost, finishReason, upstreamModel);
    outcome.usageEstimated = metered.estimated;
    return outcome;
  }

  private async settle(admitted: AdmittedGeneration, outcome: GenerationOutcome): Promise<void> {
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
