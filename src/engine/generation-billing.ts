/**
 * The money side of one generation, from its reservation to its settlement: the run is given it
 * and asks it to meter a round, price the rounds, reserve before a server-tool round, and settle.
 * One object per admitted generation (made at admission, `admitted.billing`); what every one
 * shares (the store, the logger, the count of unsettled generations) is passed in once.
 *
 * Prices are those in force when the generation was admitted: the ones it was reserved and is
 * billed at. The serving route is read from the generation at each call (failover may change it).
 */
import type { CanonicalRequest, CanonicalUsage } from "../canonical/index.js";
import type { Reservation } from "../limits/spend-guard.js";
import { estimateWorstCase } from "../limits/worst-case-cost.js";
import type { Logger } from "../logging/logger.js";
import { boundInputTokens } from "../metering/bound-input-tokens.js";
import { computeRoundsCostMicroUsd } from "../metering/compute-cost.js";
import { type ModelPrices, selectPricesInForce } from "../metering/prices.js";
import type { ProviderAdapter, UpstreamCall } from "../providers/provider-adapter.js";
import { addNativeRoundCost } from "./bound-native-round.js";
import type { GenerationAttempt, GenerationOutcome, GenerationStart } from "./generation-record.js";
import { type MeteredUsage, type MeterInput, meterUsage } from "./meter-usage.js";
import type { PendingSettlements } from "./pending-settlements.js";
import type { EngineStore } from "./ports.js";
import type { ExecutedToolCall, SettledGeneration } from "./settled-generation.js";
import type { UnsettledGenerations } from "./unsettled-generations.js";

/** What every generation's billing shares; made once by the engine. */
export interface BillingServices {
  store: EngineStore;
  logger: Logger;
  unsettled: UnsettledGenerations;
  /** Settlements handed over and not finished, for admission to wait on after a refusal. */
  pending: PendingSettlements;
}

/** What billing reads of the admitted generation (admitted-generation.ts has all of it). */
export interface BilledGeneration {
  readonly requestId: string;
  /** Its worst case held against the limits and the balance until settlement. */
  readonly reservation: Reservation;
  readonly record: GenerationStart;
  /** Settles when the in-progress record is stored; never rejects. */
  readonly recorded: Promise<void>;
  /** The serving route's call and adapter (the current attempt's until one serves). */
  readonly call: Omit<UpstreamCall, "signal">;
  readonly adapter: ProviderAdapter;
  /** Admission's bound of the first round's prompt. */
  readonly estimatedInputTokens: number;
  /** A cached request: whether the response cache answered it (then it is billed nothing). */
  readonly cache?: { readonly hit: boolean };
}

/** What `settle` hands back at once: the run goes on without waiting for the store. */
const SETTLED: Promise<void> = Promise.resolve();

/** A round's meter reading, as the run observed the round. */
export type RoundReading = Pick<MeterInput, "reported" | "finished" | "estimateOutputTokens">;

/** The next round of the tool loop, as far as its worst case goes. */
export interface NextRound {
  request: CanonicalRequest;
  /** Prompt tokens the tools' results add to `request`. */
  resultTokens: number;
}

export class GenerationBilling {
  /** Resolves once the outcome is final (before the store has it); never rejects. */
  readonly settled: Promise<SettledGeneration>;
  private announce?: (settled: SettledGeneration) => void;

  /** Opens the billing of `generation`: it counts as unsettled until `settle` has written it. */
  constructor(
    private readonly generation: BilledGeneration,
    private readonly services: BillingServices,
  ) {
    this.settled = new Promise<SettledGeneration>((resolve) => {
      this.announce = resolve;
    });
    services.unsettled.add();
  }

  private get prices(): ModelPrices {
    const { call, record } = this.generation;
    return selectPricesInForce(call.model.prices, record.createdAt?.getTime() ?? Date.now());
  }

  /**
   * Meters one round (meter-usage.ts) with the generation's output cap and prompt estimate;
   * `roundRequest`: the round's own request when it is not the first one. An over-cap report is logged.
   */
  meter(reading: RoundReading, roundRequest?: CanonicalRequest): MeteredUsage {
    const { call } = this.generation;
    const metered = meterUsage({
      reported: reading.reported,
      finished: reading.finished,
      estimateOutputTokens: reading.estimateOutputTokens,
      estimateInputTokens: () => this.estimatePrompt(roundRequest),
      outputCap: call.maxOutputTokens,
    });
    if (metered.capped) {
      this.services.logger.warn(
        {
          requestId: this.generation.requestId,
          provider: call.provider.id,
          reportedOutputTokens: reading.reported?.outputTokens,
          outputCap: call.maxOutputTokens,
        },
        "upstream reported more output than the cap it was sent; billed at the cap",
      );
    }
    return metered;
  }

  /**
   * The prompt's tokens when the upstream did not report them: text counted with o200k whatever
   * the provider kind (one estimate for one prompt), media at the kind's per-image and per-page
   * bounds, never above the bound the reservation was made with. Computed only when needed: the
   * reservation itself counts non-OpenAI text by its bytes, without tokenizing. `roundRequest`: a
   * later round of the tool loop, which reserved its own bound.
   */
  estimatePrompt(roundRequest?: CanonicalRequest): number {
    const { call, adapter } = this.generation;
    const rules = { ...adapter.inputRules };
    rules.tokenizer = "o200k";
    const estimate = boundInputTokens(roundRequest ?? call.request, rules, call.model.contextLength);
    return roundRequest === undefined ? Math.min(estimate, this.generation.estimatedInputTokens) : estimate;
  }

  /**
   * What the upstream calls (`rounds`: each call's usage, priced in its own tier) and `toolMicroUsd`
   * of server tools cost together, never more than was reserved. The reservation bounds what the
   * upstream can bill (docs/limits.md), so the cap only acts when an upstream bills past its
   * published rules; the gateway then absorbs the difference, logged, rather than let settled
   * spend pass a limit or the balance.
   */
  price(rounds: readonly CanonicalUsage[], toolMicroUsd: number): number {
    // A cached answer called no provider: it costs nothing.
    if (this.generation.cache?.hit === true) return 0;
    const cost = computeRoundsCostMicroUsd(rounds, this.prices) + toolMicroUsd;
    const reserved = this.generation.reservation.amountMicroUsd;
    if (cost <= reserved) return cost;
    this.services.logger.warn(
      { requestId: this.generation.requestId, costMicroUsd: cost, reservedMicroUsd: reserved, usage: rounds },
      "upstream usage costs more than the reservation; billed the reservation",
    );
    return reserved;
  }

  /**
   * Before a tool round: the reservation must cover what the run spent so far (`spent`: each
   * metered round's usage, `toolMicroUsd` of tools), `toolsMicroUsd` of calls about to run and the
   * next round's worst case (its prompt, the tools' results included, and its output cap at the
   * serving model's prices). Only the shortfall is reserved; a limit store that cannot be reached
   * counts as no headroom (the answer ends rather than run unreserved).
   */
  async reserveRound(
    spent: readonly CanonicalUsage[],
    toolMicroUsd: number,
    toolsMicroUsd: number,
    next: NextRound | undefined,
  ): Promise<boolean> {
    const { call, adapter, reservation } = this.generation;
    const prices = this.prices;
    let needed = computeRoundsCostMicroUsd(spent, prices) + toolMicroUsd + toolsMicroUsd;
    if (next !== undefined) {
      // The tools' results join the next prompt, so they count toward the tier it can reach.
      const worst = addNativeRoundCost(
        estimateWorstCase(next.request, prices, call.maxOutputTokens, {
          rules: adapter.inputRules,
          contextLength: call.model.contextLength,
          extraTokens: next.resultTokens,
        }),
        next.request,
        call.model,
      );
      needed += worst.amountMicroUsd;
    }
    const shortfall = needed - reservation.amountMicroUsd;
    if (shortfall <= 0) return true;
    try {
      return await reservation.extend(shortfall);
    } catch (error) {
      this.services.logger.warn(
        { err: error, requestId: this.generation.requestId },
        "could not extend the reservation for a server-tool round",
      );
      return false;
    }
  }

  /**
   * Announces the outcome, then writes it final and settles the reservation with its cost; never
   * rejects. `served`: the serving attempt; `toolCalls`: the server-tool calls executed. Called
   * once per generation (the run computes its settlement once). The numbers are final now: the
   * answer's last bytes need not wait for the store or the counters, so both are handed over here
   * and leave afterwards (in batches, the store's business), in the order that keeps the counters
   * exact; the unsettled count still waits for them, so a shutdown does not close the store
   * under them.
   */
  settle(
    outcome: GenerationOutcome,
    served: GenerationAttempt | undefined,
    toolCalls: ExecutedToolCall[],
  ): Promise<void> {
    // Whoever reports on the request (its log line, metrics) need not wait for the store either.
    const settled: SettledGeneration = { outcome, served, toolCalls };
    const { cache } = this.generation;
    if (cache !== undefined) settled.cache = cache.hit ? "hit" : "miss";
    this.announce?.(settled);
    this.announce = undefined;
    const recorded = this.record(outcome);
    this.services.pending.track(
      this.generation.record.apiKeyId,
      this.generation.record.workspaceId,
      recorded,
    );
    // During a database outage the record is parked on disk before the answer ends, as before.
    return this.services.store.generations.answerWaitsForRecord?.() === true ? recorded : SETTLED;
  }

  /** Writes the final record, then settles the reservation with its cost; never rejects. */
  private async record(outcome: GenerationOutcome): Promise<void> {
    const { requestId, record, recorded, reservation } = this.generation;
    const { store, logger, unsettled } = this.services;
    // A start still being stored (a stream that failed at once) must land first, or it would be
    // left behind (in Redis, in the sweep's index) after its final record.
    await recorded;
    try {
      await store.generations.finish(requestId, outcome, record);
    } catch (error) {
      // Never lose the usage silently: the log line carries everything needed to replay it.
      logger.error({ err: error, requestId, outcome }, "failed to record generation outcome");
    }
    unsettled.remove();
    // After Postgres, never before: a counter seeded in between must not miss this cost
    // (src/limits/seed-counters.ts relies on this order).
    await reservation.settle(outcome.costMicroUsd);
  }
}
