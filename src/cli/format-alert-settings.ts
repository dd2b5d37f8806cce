/** Human-readable output of the budget-alert commands (`--json` is the admin API's document). */
import type { WebhookJson } from "./admin-alerts.js";

function formatThresholds(thresholds: number[] | null | undefined, none: string): string {
  return thresholds === null || thresholds === undefined || thresholds.length === 0
    ? none
    : thresholds.map((threshold) => `${threshold}%`).join(", ");
}

/** Appended to the key's fields: same indentation and label width as `formatKey`'s. */
export function formatKeyThresholds(thresholds: number[] | null): string {
  return `  alert thresholds  ${formatThresholds(thresholds, "none (the workspace's apply)")}\n`;
}

export function formatWebhook(webhook: WebhookJson, action: "show" | "set" | "remove"): string {
  if (action === "remove") return `Removed the budget-alert webhook of workspace ${webhook.workspace_id}\n`;
  const shown = action === "set" ? { url: webhook.url, thresholds: webhook.thresholds } : webhook.webhook;
  if (shown === null || shown === undefined || shown.url === undefined) {
    return `Workspace ${webhook.workspace_id} has no budget-alert webhook\n`;
  }
  const lines = [
    action === "set"
      ? `Set the budget-alert webhook of workspace ${webhook.workspace_id}`
      : `Budget-alert webhook of workspace ${webhook.workspace_id}`,
    `  url         ${shown.url}`,
    `  thresholds  ${formatThresholds(shown.thresholds, "none (only keys with their own thresholds alert)")}`,
  ];
  if (webhook.secret !== undefined) {
    lines.push(
      `  secret      ${webhook.secret}`,
      "",
      "The secret signs every webhook body (X-Hi-Signature). It is shown only now: store it where the",
      "receiver can read it. Setting the webhook again replaces it.",
    );
  }
  return `${lines.join("\n")}\n`;
}
