/** Human-readable CLI output. Machine output (`--json`) is the admin API's wire form instead. */

import type { TotalReset } from "../admin/admin-service.js";
import { formatMicroUsd } from "../admin/parse-usd.js";
import type { ApiKeyRecord, Workspace } from "../auth/accounts.js";
import type { KeyLimits } from "../limits/ports.js";

function formatOnOff(value: boolean): string {
  return value ? "on" : "off";
}

function formatUsd(microUsd: number): string {
  return `${microUsd < 0 ? "-" : ""}$${formatMicroUsd(Math.abs(microUsd))}`;
}

/** Shows `active` keys past their expiry as expired: that is the state auth applies. */
function describeStatus(key: ApiKeyRecord, now: Date): string {
  if (key.status === "active" && key.expiresAt && key.expiresAt <= now) return "expired";
  return key.status;
}

function formatFields(fields: Array<[string, string]>): string {
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join("\n");
}

export function formatWorkspace(headline: string, workspace: Workspace): string {
  return `${headline}\n${formatFields([
    ["id", workspace.id],
    ["name", workspace.name],
    ["balance", `${formatUsd(workspace.balanceMicroUsd)} (${workspace.balanceMicroUsd} micro-USD)`],
    ["invoicing", formatOnOff(workspace.invoicing)],
    ["locked", formatOnOff(workspace.locked)],
    ["cache policy", formatCachePolicy(workspace.responseCacheTtlSeconds, "off")],
    ["created", workspace.createdAt.toISOString()],
  ])}\n`;
}

/** A response-cache policy (docs/response-cache.md): its TTL, or what applies without one. */
function formatCachePolicy(ttlSeconds: number | null | undefined, without: string): string {
  return ttlSeconds == null ? without : `${ttlSeconds} s for deterministic requests`;
}

function formatLimit(microUsd: number | null): string {
  return microUsd === null ? "none" : `${formatUsd(microUsd)} (${microUsd} micro-USD)`;
}

function formatLimitFields(limits: KeyLimits): Array<[string, string]> {
  return [
    ["daily limit", formatLimit(limits.dailyMicroUsd)],
    ["monthly limit", formatLimit(limits.monthlyMicroUsd)],
    ["total limit", formatLimit(limits.totalMicroUsd)],
    ["total since", limits.totalResetAt?.toISOString() ?? "key creation"],
    ["rpm", limits.requestsPerMinute === null ? "default" : String(limits.requestsPerMinute)],
  ];
}

export function formatKey(headline: string, key: ApiKeyRecord, limits?: KeyLimits, now = new Date()): string {
  return `${headline}\n${formatFields([
    ["id", key.id],
    ["workspace", key.workspaceId],
    ["name", key.name || "-"],
    ["display", key.display],
    ["status", describeStatus(key, now)],
    ["models", key.allowedModels?.join(", ") ?? "all"],
    ["expires", key.expiresAt?.toISOString() ?? "never"],
    ["member", key.memberId ?? "-"],
    ["cache policy", formatCachePolicy(key.responseCacheTtlSeconds, "workspace's")],
    ["created", key.createdAt.toISOString()],
    ...(limits ? formatLimitFields(limits) : []),
  ])}\n`;
}

export function formatTotalReset(reset: TotalReset): string {
  return (
    `${formatKey(`Reset the total spend of API key ${reset.key.id}`, reset.key, reset.limits)}` +
    `  previous total spend ${formatUsd(reset.previousSpendMicroUsd)} (${reset.previousSpendMicroUsd} micro-USD), ` +
    `new window from ${reset.resetAt.toISOString()}; audit-logged\n`
  );
}

export function formatCreatedKey(key: ApiKeyRecord, secret: string, limits?: KeyLimits): string {
  return (
    `${formatKey(`Created API key ${key.id}`, key, limits)}\n` +
    `  ${secret}\n\n` +
    "This is the only time the key is shown: store it now, it cannot be recovered.\n"
  );
}

export function formatKeyTable(workspaceId: string, keys: ApiKeyRecord[], now = new Date()): string {
  if (keys.length === 0) return `No API keys in workspace ${workspaceId}\n`;
  const header = ["ID", "NAME", "DISPLAY", "STATUS", "MODELS", "EXPIRES", "MEMBER", "CREATED"];
  return formatTable(
    header,
    keys.map((key) => [
      key.id,
      key.name || "-",
      key.display,
      describeStatus(key, now),
      key.allowedModels?.join(",") ?? "all",
      key.expiresAt?.toISOString() ?? "never",
      key.memberId ?? "-",
      key.createdAt.toISOString(),
    ]),
  );
}

export function formatWorkspaceTable(workspaces: Workspace[], limit: number): string {
  if (workspaces.length === 0) return "No workspaces\n";
  const table = formatTable(
    ["ID", "NAME", "BALANCE", "INVOICING", "LOCKED", "CREATED"],
    workspaces.map((workspace) => [
      workspace.id,
      workspace.name,
      formatUsd(workspace.balanceMicroUsd),
      formatOnOff(workspace.invoicing),
      formatOnOff(workspace.locked),
      workspace.createdAt.toISOString(),
    ]),
  );
  return workspaces.length < limit ? table : `${table}(the first ${limit}; --limit shows more)\n`;
}

export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  return `${[header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}
