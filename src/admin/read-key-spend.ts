/**
 * Where a key stands against its limits: settled spend per window (PostgreSQL), what requests in
 * flight hold (the limit store), the rate limit that applies and the workspace's balance. Read by
 * the key itself (`GET /api/v1/key`) and by admins (`GET /internal/admin/keys/:id/spend`), in one
 * wire form: a USD number for reading plus an exact micro-USD string. Windows follow the limits'
 * clock.
 */

import type { AlertRepository, KeyAlertStatus } from "../alerts/ports.js";
import type { ApiKeyRecord } from "../auth/accounts.js";
import { computeLimitWindows } from "../limits/limit-windows.js";
import type { KeyLimits, SpendWindowName } from "../limits/ports.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import { convertMicroUsdToUsd } from "../metering/money.js";
import { encodeKey, encodeKeyLimits, type KeyJson, type KeyLimitsJson } from "./admin-wire.js";
import type { AdminStore } from "./ports.js";

export interface KeySpendDeps {
  store: Pick<AdminStore, "keyLimits">;
  spendGuard: Pick<SpendGuard, "now" | "readReserved">;
  /** The config's default rate limit (null: unlimited). */
  defaultRequestsPerMinute: number | null;
  /** When given, the report has `alerts` (one more statement, read alongside the spend). */
  alerts?: Pick<AlertRepository, "readKeyStatus">;
  /** This instance's settlements still under way (the engine's); the report waits for the key's. */
  settlements?: PendingSettlementsReader;
}

/** What the report needs of the engine: its settlements of finished answers still under way. */
export interface PendingSettlementsReader {
  awaitPendingSettlements(keyId: string, workspaceId: string, timeoutMs: number): Promise<void>;
}

/** The longest a report waits for this instance's settlements of the key's finished answers. */
const SETTLEMENT_WAIT_MS = 2_000;

/** Budget alerts of the key (docs/limits.md, "Budget alerts"). */
export interface KeyAlertsJson {
  /** The thresholds that apply (percent of each limit): the key's own, else its workspace's. */
  thresholds: number[];
  source: "key" | "workspace" | "none";
  /** Whether the workspace has a webhook; without one no alert is sent. */
  webhook: boolean;
  /** Thresholds crossed (alerts claimed) in each current window, in the order they were crossed. */
  crossed: Record<SpendWindowName, Array<{ threshold_percent: number; crossed_at: string }>>;
}

export interface SpendWindowJson {
  limit_usd: number | null;
  limit_micro_usd: string | null;
  spent_usd: number;
  spent_micro_usd: string;
  /** Held by requests in flight; null when the limit store cannot be read. */
  reserved_usd: number | null;
  reserved_micro_usd: string | null;
  /** limit − spent − reserved (≥ 0); null: no limit. */
  remaining_usd: number | null;
  remaining_micro_usd: string | null;
  window_start: string;
  /** null: the total window never resets by itself. */
  resets_at: string | null;
}

export interface KeySpendJson {
  rate_limit: { requests_per_minute: number | null; source: "key" | "default" | "none" };
  limits: Record<SpendWindowName, SpendWindowJson>;
  workspace: {
    balance_usd: number;
    balance_micro_usd: string;
    reserved_usd: number | null;
    reserved_micro_usd: string | null;
    invoicing: boolean;
  };
  alerts?: KeyAlertsJson;
}

export interface KeySpend {
  /** Limits and allowlist as read now (fresher than a cached key record). */
  limits: KeyLimits;
  allowedModels: string[] | null;
  report: KeySpendJson;
}

/** null when the key no longer exists. */
export async function readKeySpend(deps: KeySpendDeps, key: ApiKeyRecord): Promise<KeySpend | null> {
  // An answer ends before its settlement: a report asked for right after an answer waits until
  // this instance has settled it, so it shows the answer's cost rather than its reservation.
  await deps.settlements?.awaitPendingSettlements(key.id, key.workspaceId, SETTLEMENT_WAIT_MS);
  const nowMs = await deps.spendGuard.now();
  const fresh = await deps.store.keyLimits.readAdmission(key.id);
  if (!fresh) return null;
  const { limits, workspace } = fresh;
  const windows = computeLimitWindows(nowMs, limits.totalResetAt);
  const [spent, reserved, alertStatus] = await Promise.all([
    deps.store.keyLimits.sumSpend(key.id, {
      daily: { since: new Date(windows.daily.startMs), until: new Date(windows.daily.endMs!) },
      monthly: { since: new Date(windows.monthly.startMs), until: new Date(windows.monthly.endMs!) },
      total: { since: new Date(windows.total.startMs), until: null },
    }),
    deps.spendGuard.readReserved(workspace.id, key.id),
    deps.alerts?.readKeyStatus(key.id, workspace.id, {
      daily: new Date(windows.daily.startMs),
      monthly: new Date(windows.monthly.startMs),
      total: new Date(windows.total.startMs),
    }),
  ]);

  const describeWindow = (name: SpendWindowName, limit: number | null): SpendWindowJson => {
    const spentMicro = spent[name] ?? 0;
    const reservedMicro = reserved?.keyMicroUsd ?? null;
    const remaining = limit === null ? null : Math.max(0, limit - spentMicro - (reservedMicro ?? 0));
    const window = windows[name];
    return {
      limit_usd: toUsd(limit),
      limit_micro_usd: toExact(limit),
      spent_usd: convertMicroUsdToUsd(spentMicro),
      spent_micro_usd: String(spentMicro),
      reserved_usd: toUsd(reservedMicro),
      reserved_micro_usd: toExact(reservedMicro),
      remaining_usd: toUsd(remaining),
      remaining_micro_usd: toExact(remaining),
      // A key never reset counts its total from its creation.
      window_start: new Date(
        name === "total" && limits.totalResetAt === null ? key.createdAt.getTime() : window.startMs,
      ).toISOString(),
      resets_at: window.endMs === null ? null : new Date(window.endMs).toISOString(),
    };
  };
  const rpm = limits.requestsPerMinute ?? deps.defaultRequestsPerMinute;
  const workspaceReserved = reserved?.workspaceMicroUsd ?? null;
  return {
    limits,
    allowedModels: fresh.allowedModels,
    report: {
      rate_limit: {
        requests_per_minute: rpm,
        source: limits.requestsPerMinute !== null ? "key" : rpm !== null ? "default" : "none",
      },
      limits: {
        daily: describeWindow("daily", limits.dailyMicroUsd),
        monthly: describeWindow("monthly", limits.monthlyMicroUsd),
        total: describeWindow("total", limits.totalMicroUsd),
      },
      workspace: {
        balance_usd: convertMicroUsdToUsd(workspace.balanceMicroUsd),
        balance_micro_usd: String(workspace.balanceMicroUsd),
        reserved_usd: toUsd(workspaceReserved),
        reserved_micro_usd: toExact(workspaceReserved),
        invoicing: workspace.invoicing,
      },
      ...(alertStatus === undefined ? {} : { alerts: encodeKeyAlerts(alertStatus) }),
    },
  };
}

function encodeKeyAlerts(status: KeyAlertStatus): KeyAlertsJson {
  const crossed: KeyAlertsJson["crossed"] = { daily: [], monthly: [], total: [] };
  for (const claim of status.crossed) {
    crossed[claim.window]?.push({
      threshold_percent: claim.threshold,
      crossed_at: claim.claimedAt.toISOString(),
    });
  }
  const source =
    status.keyThresholds !== null ? "key" : status.workspaceThresholds !== null ? "workspace" : "none";
  return {
    thresholds: status.keyThresholds ?? status.workspaceThresholds ?? [],
    source,
    webhook: status.webhook,
    crossed,
  };
}

function toUsd(microUsd: number | null): number | null {
  return microUsd === null ? null : convertMicroUsdToUsd(microUsd);
}

function toExact(microUsd: number | null): string | null {
  return microUsd === null ? null : String(microUsd);
}

/** `GET /internal/admin/keys/{id}/spend` as served: the key, its limits and where it stands. */
export interface KeySpendReportJson {
  key: KeyJson;
  limits: KeyLimitsJson;
  spend: Record<SpendWindowName, SpendWindowJson>;
  rate_limit: KeySpendJson["rate_limit"];
  workspace: KeySpendJson["workspace"];
}

export function encodeKeySpendReport(key: ApiKeyRecord, spend: KeySpend): KeySpendReportJson {
  const { limits: windows, rate_limit, workspace } = spend.report;
  return {
    key: encodeKey(key),
    limits: encodeKeyLimits(spend.limits),
    spend: windows,
    rate_limit,
    workspace,
  };
}
