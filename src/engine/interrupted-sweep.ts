/**
 * Settles the records of requests whose instance died mid-request (docs/durability.md). Every
 * admitted request is recorded in progress before its upstream is called, and every live request
 * ends by `limits.max_request_seconds` (the engine stops it then), so a record still in progress
 * well past that has nobody left to settle it. The sweep writes it final with status `interrupted`
 * and releases its reservation:
 *
 * - at start-up in embedded mode, for every record in progress: one process owns the data folder,
 *   so whatever the previous one left open died with it;
 * - periodically on every instance, for records admitted more than `max_request_seconds` plus a
 *   grace ago (by the limits' clock, the one that stamped their admission).
 *
 * What an interrupted record is billed: its prompt, as admission estimated it (tokens × the model's
 * prompt price), and no output. The prompt was sent, so the upstream billed it; what came back is
 * unknown (the instance that saw it is gone), and the client got at most part of it, so billing
 * output would charge for an answer that may never have been delivered. This is the rule for a
 * client that leaves before its answer, and it never exceeds the reservation. `usage_estimated` is
 * true. Settling is `finish`, idempotent: two instances sweeping the same record debit it once.
 */
import type { GatewayConfig } from "../config/gateway-config.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import { computeCostMicroUsd } from "../metering/compute-cost.js";
import { selectPricesInForce } from "../metering/prices.js";
import type { GenerationOutcome, GenerationStart } from "./generation-record.js";
import { meterPromptOnly } from "./meter-usage.js";
import type { EngineStore } from "./ports.js";

export interface InterruptedSweepDeps {
  config: GatewayConfig;
  store: EngineStore;
  spendGuard: SpendGuard;
  logger: Logger;
}

/** Records settled per listing; a sweep lists again until it finds fewer. */
const SWEEP_BATCH = 100;
/** A sweep settles at most this many records, the rest at its next run. */
const MAX_PER_SWEEP = 10_000;
/**
 * How long past the deadline a live request may still be settling (it is stopped at the deadline,
 * then writes its record, which waits at most a few seconds for the database before it is parked).
 */
const SETTLE_GRACE_MS = 10_000;
/** The periodic sweep runs at most this far apart. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/** Age past which a record still in progress is interrupted: the deadline plus a grace. */
export function computeInterruptedAgeMs(config: GatewayConfig): number {
  return config.maxRequestMs + Math.min(SETTLE_GRACE_MS, config.maxRequestMs);
}

/**
 * Settles every record in progress admitted before `admittedBefore`; returns how many it settled.
 * A record that cannot be settled (the database refuses it: a record of another deployment
 * sharing the Redis, say) is logged and skipped, so it never blocks the records listed after it.
 */
export async function settleInterrupted(deps: InterruptedSweepDeps, admittedBefore: Date): Promise<number> {
  return settleListed(deps, (limit) => deps.store.generations.listInProgress(admittedBefore, limit)).then(
    ({ settled }) => {
      if (settled > 0) deps.logger.warn({ settled }, "settled requests interrupted by a crashed instance");
      return settled;
    },
  );
}

/**
 * Settles what `list` lists until it lists nothing new: `settled` records, and `exhausted` when the
 * last listing had nothing left (every record settled, none skipped).
 */
export async function settleListed(
  deps: InterruptedSweepDeps,
  list: (limit: number) => Promise<GenerationStart[]>,
): Promise<{ settled: number; exhausted: boolean }> {
  // Ids settled (their index entries are deleted in the background) or skipped in this sweep.
  const seen = new Set<string>();
  let settled = 0;
  while (seen.size < MAX_PER_SWEEP) {
    // Past the ones seen: a skipped record stays listed, a settled one may for a moment.
    const starts = await list(SWEEP_BATCH + seen.size);
    const fresh = starts.filter((start) => !seen.has(start.id));
    if (fresh.length === 0) return { settled, exhausted: starts.length === 0 };
    for (const start of fresh) {
      seen.add(start.id);
      try {
        await settleInterruptedRecord(deps, start);
        settled++;
      } catch (error) {
        deps.logger.warn({ err: error, requestId: start.id }, "interrupted request not settled");
      }
    }
  }
  return { settled, exhausted: false };
}

/**
 * Writes one record final as interrupted (or with the outcome its run settled it with, when that
 * is known: `settledWith`), then settles its reservation with that cost.
 */
export async function settleInterruptedRecord(
  deps: InterruptedSweepDeps,
  listed: GenerationStart,
): Promise<void> {
  const { settledWith, ...start } = listed;
  const outcome = settledWith ?? createInterruptedOutcome(deps, start);
  await deps.store.generations.finish(start.id, outcome, start);
  // After Postgres, as every settlement (seed-counters.ts relies on the order).
  await deps.spendGuard.settleOrphan({
    requestId: start.id,
    keyId: start.apiKeyId,
    workspaceId: start.workspaceId,
    admittedAt: start.createdAt ?? new Date(),
    costMicroUsd: outcome.costMicroUsd,
  });
}

function createInterruptedOutcome(deps: InterruptedSweepDeps, start: GenerationStart): GenerationOutcome {
  const model = deps.config.modelsBySlug.get(start.model);
  const { usage } = meterPromptOnly(start.estimatedInputTokens ?? 0);
  const outcome: GenerationOutcome = {
    status: "interrupted",
    errorCode: null,
    upstreamProvider: model?.routes[0].provider.id ?? null,
    upstreamModel: model?.routes[0].upstreamModel ?? null,
    tokensPrompt: usage.inputTokens,
    tokensCompletion: 0,
    tokensReasoning: 0,
    tokensCachedPrompt: 0,
    tokensCacheWrite: 0,
    // A model no longer in the catalog has no price: its prompt is recorded, not billed.
    costMicroUsd: model
      ? computeCostMicroUsd(
          usage,
          selectPricesInForce(model.prices, start.createdAt?.getTime() ?? Date.now()),
        )
      : 0,
    toolCostsMicroUsd: {},
    // Unknown: nobody saw the request end.
    latencyMs: 0,
    finishReason: null,
    usageEstimated: true,
  };
  return outcome;
}

export interface InterruptedSweep {
  /** One sweep now (waits for one in progress first); resolves with how many it settled. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

/** The periodic sweep of every instance: records older than `computeInterruptedAgeMs`. */
export function startInterruptedSweep(deps: InterruptedSweepDeps): InterruptedSweep {
  const ageMs = computeInterruptedAgeMs(deps.config);
  const intervalMs = Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1_000, Math.round(ageMs / 4)));
  let running: Promise<number> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function runNow(): Promise<number> {
    const previous = running ?? Promise.resolve(0);
    const next = previous
      .catch(() => 0)
      .then(async () => {
        const cutoff = new Date((await deps.spendGuard.now()) - ageMs);
        return settleInterrupted(deps, cutoff);
      });
    running = next;
    return next.finally(() => {
      if (running === next) running = undefined;
    });
  }

  function schedule(): void {
    if (stopped) return;
    // Instances sharing a database spread their sweeps out instead of running them together.
    timer = setTimeout(
      () => {
        runNow()
          .catch((error: unknown) => deps.logger.warn({ err: error }, "sweep of interrupted requests failed"))
          .finally(schedule);
      },
      intervalMs * (0.75 + Math.random() / 2),
    );
    timer.unref();
  }

  schedule();
  return {
    runNow,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
