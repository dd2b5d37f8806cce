/**
 * Budget alerts (docs/limits.md, "Budget alerts"): after a request settles with a cost, the key's
 * settled spend in each window that has a limit is compared with its thresholds (percent of the
 * limit; the key's own, else its workspace's). Each threshold crossed is claimed once per window
 * in PostgreSQL (a primary key on key, window, window start and threshold), so of all the
 * instances that settle requests of the key, exactly one sends it; that one POSTs a signed webhook
 * to the workspace's URL, retried with backoff, each attempt recorded. All of it runs off the
 * request path: the answer has been sent, and a failure here is logged, never thrown.
 */
import { randomBytes } from "node:crypto";
import { computeLimitWindows } from "../limits/limit-windows.js";
import type { KeyLimitRepository, KeyLimits, SpendWindowName } from "../limits/ports.js";
import type { Logger } from "../logging/logger.js";
import type { AlertRepository } from "./ports.js";
import { postWebhook, type WebhookPolicy } from "./post-webhook.js";
import { SIGNATURE_HEADER, signWebhook } from "./sign-webhook.js";

export interface BudgetAlertOptions {
  alerts: AlertRepository;
  keyLimits: Pick<KeyLimitRepository, "sumSpend">;
  policy: WebhookPolicy;
  logger?: Logger;
  /** Attempts per alert (default 5) and the deadline of each (default 10 s). */
  maxAttempts?: number;
  attemptTimeoutMs?: number;
  /** Backoff before attempt n+1: base × 4^(n−1) (default 1 s: 1, 4, 16, 64 s). */
  backoffBaseMs?: number;
}

export interface SettledSpend {
  keyId: string;
  workspaceId: string;
  limits: KeyLimits;
  /** The admission time: the windows the cost went into. */
  admittedAt: number;
  costMicroUsd: number;
}

export interface BudgetAlerts {
  /** Called once per settlement; returns at once. */
  onSettled(settled: SettledSpend): void;
  /** Resolves when every check and delivery started so far is done (tests, shutdown). */
  idle(): Promise<void>;
}

const WINDOWS: readonly SpendWindowName[] = ["daily", "monthly", "total"];

export function createBudgetAlerts(options: BudgetAlertOptions): BudgetAlerts {
  const maxAttempts = options.maxAttempts ?? 5;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  const backoffBaseMs = options.backoffBaseMs ?? 1_000;
  const pending = new Set<Promise<void>>();

  const track = (work: Promise<void>) => {
    const tracked = work.catch((error) => options.logger?.warn({ err: error }, "budget alert check failed"));
    pending.add(tracked);
    tracked.finally(() => pending.delete(tracked));
  };

  async function check(settled: SettledSpend): Promise<void> {
    const limitOf = (window: SpendWindowName) =>
      window === "daily"
        ? settled.limits.dailyMicroUsd
        : window === "monthly"
          ? settled.limits.monthlyMicroUsd
          : settled.limits.totalMicroUsd;
    const limited = WINDOWS.filter((window) => limitOf(window) !== null);
    if (limited.length === 0) return;
    const target = await options.alerts.readTarget(settled.keyId, settled.workspaceId);
    if (target === null) return;
    const windows = computeLimitWindows(settled.admittedAt, settled.limits.totalResetAt);
    const spent = await options.keyLimits.sumSpend(
      settled.keyId,
      Object.fromEntries(
        limited.map((window) => [
          window,
          {
            since: new Date(windows[window].startMs),
            until: windows[window].endMs === null ? null : new Date(windows[window].endMs as number),
          },
        ]),
      ),
    );
    for (const window of limited) {
      const limit = limitOf(window) as number;
      const spentMicro = spent[window] ?? 0;
      for (const threshold of target.thresholds) {
        // spent ≥ threshold% of the limit, in integers.
        if (spentMicro * 100 < limit * threshold) continue;
        const claim = {
          keyId: settled.keyId,
          workspaceId: settled.workspaceId,
          window,
          windowStart: new Date(windows[window].startMs),
          threshold,
          spentMicroUsd: spentMicro,
          limitMicroUsd: limit,
        };
        if (!(await options.alerts.claim(claim))) continue;
        await deliver(target.url, target.secret, claim);
      }
    }
  }

  async function deliver(
    url: string,
    secret: string,
    claim: Parameters<AlertRepository["claim"]>[0],
  ): Promise<void> {
    const alertId = `alert_${randomBytes(12).toString("base64url")}`;
    const body = JSON.stringify({
      id: alertId,
      type: "budget.threshold_crossed",
      workspace_id: claim.workspaceId,
      api_key_id: claim.keyId,
      window: claim.window,
      window_start: claim.windowStart.toISOString(),
      threshold_percent: claim.threshold,
      limit_micro_usd: String(claim.limitMicroUsd),
      spent_micro_usd: String(claim.spentMicroUsd),
      remaining_micro_usd: String(Math.max(0, claim.limitMicroUsd - claim.spentMicroUsd)),
      created_at: new Date().toISOString(),
    });
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const started = performance.now();
      const signature = signWebhook(secret, body, Math.floor(Date.now() / 1000));
      const result = await postWebhook(
        url,
        { [SIGNATURE_HEADER]: signature, "X-Hi-Alert-Id": alertId, "X-Hi-Delivery-Attempt": String(attempt) },
        body,
        options.policy,
        attemptTimeoutMs,
      );
      const delivered = result.error === null;
      await options.alerts
        .recordDelivery({
          alertId,
          workspaceId: claim.workspaceId,
          keyId: claim.keyId,
          window: claim.window,
          windowStart: claim.windowStart,
          threshold: claim.threshold,
          attempt,
          url,
          statusCode: result.statusCode,
          error: result.error,
          delivered,
          durationMs: Math.round(performance.now() - started),
        })
        .catch((error) => options.logger?.warn({ err: error, alertId }, "alert delivery not recorded"));
      if (delivered) return;
      if (attempt < maxAttempts) {
        await new Promise((resolve) => setTimeout(resolve, backoffBaseMs * 4 ** (attempt - 1)));
      }
    }
    options.logger?.warn({ alertId, url }, "budget alert not delivered after every attempt");
  }

  return {
    onSettled(settled) {
      // Called for every settlement: a key without a spend limit costs no check (nor its promises).
      if (settled.costMicroUsd <= 0 || !hasSpendLimit(settled.limits)) return;
      track(check(settled));
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

function hasSpendLimit(limits: KeyLimits): boolean {
  return limits.dailyMicroUsd !== null || limits.monthlyMicroUsd !== null || limits.totalMicroUsd !== null;
}
