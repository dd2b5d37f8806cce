/** Human-readable CLI output. Machine output (`--json`) is the admin API's wire form instead. */
import { formatMicroUsd } from "../admin/parse-usd.js";
import type { ApiKeyRecord, Workspace } from "../storage/types.js";

function formatOnOff(value: boolean): string {
  return value ? "on" : "off";
}

function formatUsd(microUsd: number): string {
  return `${microUsd < 0 ? "-" : ""}$${formatMicroUsd(Math.abs(microUsd))}`;
}

/** Shows `active` keys past their expiry as expired: that is the state auth applies (spec §3). */
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
    ["created", workspace.createdAt.toISOString()],
  ])}\n`;
}

export function formatKey(headline: string, key: ApiKeyRecord, now = new Date()): string {
  return `${headline}\n${formatFields([
    ["id", key.id],
    ["workspace", key.workspaceId],
    ["name", key.name || "-"],
    ["display", key.display],
    ["status", describeStatus(key, now)],
    ["models", key.allowedModels?.join(", ") ?? "all"],
    ["expires", key.expiresAt?.toISOString() ?? "never"],
    ["member", key.memberId ?? "-"],
    ["created", key.createdAt.toISOString()],
  ])}\n`;
}

export function formatCreatedKey(key: ApiKeyRecord, secret: string): string {
  return (
    `${formatKey(`Created API key ${key.id}`, key)}\n` +
    `  ${secret}\n\n` +
    "This is the only time the key is shown: store it now, it cannot be recovered.\n"
  );
}

export function formatKeyTable(workspaceId: string, keys: ApiKeyRecord[], now = new Date()): string {
  if (keys.length === 0) return `No API keys in workspace ${workspaceId}\n`;
  const header = ["ID", "NAME", "DISPLAY", "STATUS", "MODELS", "EXPIRES", "MEMBER", "CREATED"];
  const rows = keys.map((key) => [
    key.id,
    key.name || "-",
    key.display,
    describeStatus(key, now),
    key.allowedModels?.join(",") ?? "all",
    key.expiresAt?.toISOString() ?? "never",
    key.memberId ?? "-",
    key.createdAt.toISOString(),
  ]);
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
