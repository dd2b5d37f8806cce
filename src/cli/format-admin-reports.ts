/** Human-readable CLI output of the admin API's reports (`--json` prints the documents themselves). */
import type { KeySpendReportJson, SpendWindowJson } from "../admin/read-key-spend.js";
import type { WorkspaceUsageJson } from "../admin/read-workspace-usage.js";
import type { AdminRequestJson } from "./admin-reports.js";
import { formatTable } from "./format-admin-output.js";

const WINDOWS = ["daily", "monthly", "total"] as const;

function formatExactUsd(micro: string | null): string {
  if (micro === null) return "unknown";
  const value = BigInt(micro);
  const sign = value < 0n ? "-" : "";
  const magnitude = value < 0n ? -value : value;
  const fraction = String(magnitude % 1_000_000n)
    .padStart(6, "0")
    .replace(/0+$/, "");
  return `${sign}$${magnitude / 1_000_000n}${fraction === "" ? "" : `.${fraction}`}`;
}

function describeWindow(window: SpendWindowJson): string {
  const spent = `${formatExactUsd(window.spent_micro_usd)} spent`;
  const reserved = `${formatExactUsd(window.reserved_micro_usd)} in flight`;
  const limit =
    window.limit_micro_usd === null
      ? "no limit"
      : `limit ${formatExactUsd(window.limit_micro_usd)}, ${formatExactUsd(window.remaining_micro_usd)} left`;
  const resets = window.resets_at === null ? "never resets by itself" : `resets ${window.resets_at}`;
  return `${spent}, ${reserved}; ${limit} (since ${window.window_start}; ${resets})`;
}

/** The spend lines `key show` adds under the key's fields. */
export function formatSpendWindows(report: Pick<KeySpendReportJson, "spend">): string {
  const width = "monthly spend".length;
  return `${WINDOWS.map((name) => `  ${`${name} spend`.padEnd(width)}  ${describeWindow(report.spend[name])}`).join("\n")}\n`;
}

export function formatKeySpend(report: KeySpendReportJson): string {
  const rate = report.rate_limit;
  const workspace = report.workspace;
  const balance = workspace.invoicing
    ? "invoicing (no balance check)"
    : `${formatExactUsd(workspace.balance_micro_usd)}, ${formatExactUsd(workspace.reserved_micro_usd)} in flight`;
  return (
    `Spend of API key ${report.key.id} (workspace ${report.key.workspace_id})\n` +
    formatSpendWindows(report) +
    `  rate limit     ${rate.requests_per_minute === null ? "none" : `${rate.requests_per_minute} per minute`} (${rate.source})\n` +
    `  balance        ${balance}\n`
  );
}

export function formatWorkspaceUsage(usage: WorkspaceUsageJson): string {
  const headline = `Usage of workspace ${usage.workspace_id}, ${usage.since} to ${usage.until} (${usage.days} UTC days)\n`;
  if (usage.data.length === 0) return `${headline}No requests\n`;
  let total = 0n;
  let requests = 0;
  for (const row of usage.data) {
    total += BigInt(row.cost_micro_usd);
    requests += row.requests;
  }
  return (
    headline +
    formatTable(
      ["DAY", "MODEL", "REQUESTS", "PROMPT", "COMPLETION", "COST"],
      usage.data.map((row) => [
        row.day,
        row.model,
        String(row.requests),
        String(row.tokens_prompt),
        String(row.tokens_completion),
        formatExactUsd(row.cost_micro_usd),
      ]),
    ) +
    `${requests} requests, ${formatExactUsd(String(total))} in all\n`
  );
}

export function formatRequestTable(requests: AdminRequestJson[]): string {
  if (requests.length === 0) return "No requests\n";
  return formatTable(
    ["ID", "CREATED", "KEY", "MODEL", "STATUS", "PROMPT", "COMPLETION", "COST", "LATENCY"],
    requests.map((request) => [
      request.id,
      request.created_at,
      request.api_key_id,
      request.model,
      request.status,
      String(request.tokens_prompt),
      String(request.tokens_completion),
      formatExactUsd(request.cost_micro_usd),
      request.latency_ms === null ? "-" : `${request.latency_ms} ms`,
    ]),
  );
}
