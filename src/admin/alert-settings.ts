/**
 * Budget-alert settings as administration changes them (admin API, CLI, console): a key's
 * thresholds, a workspace's webhook (URL, default thresholds, signing secret shown once) and the
 * list of delivery attempts. Validates everything; the URL by the webhook's outbound rules.
 */

import type { AlertDeliveryRecord, AlertRepository } from "../alerts/ports.js";
import { checkWebhookUrl, type WebhookPolicy } from "../alerts/post-webhook.js";
import { createWebhookSecret } from "../alerts/sign-webhook.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { AuditOf } from "../limits/ports.js";
import { DEFAULT_ACTOR } from "./audit-admin-change.js";
import type { ApiKeyRepository, WorkspaceRepository } from "./ports.js";
import { createUnknownWorkspaceError } from "./workspace-errors.js";

export const MAX_THRESHOLDS = 10;
export const DELIVERY_LIST_LIMIT = { default: 50, max: 500 } as const;

export interface AlertSettingsDeps {
  alerts: AlertRepository;
  apiKeys: Pick<ApiKeyRepository, "get">;
  workspaces: Pick<WorkspaceRepository, "get">;
  /** null when the URL may be used, else why not. */
  checkWebhookUrl(url: string): string | null;
}

/** Whole percent from 1 to 1000, each once, ascending; null clears. */
export function readThresholds(value: unknown, param: string): number[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_THRESHOLDS) {
    throw GatewayError.invalidRequest(
      `${param} must be a list of 1 to ${MAX_THRESHOLDS} percentages (e.g. [50, 80, 100]), or null`,
      param,
    );
  }
  const set = new Set<number>();
  for (const item of value) {
    if (typeof item !== "number" || !Number.isInteger(item) || item < 1 || item > 1000) {
      throw GatewayError.invalidRequest(
        `${param}: ${String(item)} is not a whole percentage from 1 to 1000`,
        param,
      );
    }
    set.add(item);
  }
  return [...set].sort((a, b) => a - b);
}

export function encodeDelivery(record: AlertDeliveryRecord) {
  return {
    id: record.id,
    alert_id: record.alertId,
    api_key_id: record.keyId,
    window: record.window,
    window_start: record.windowStart.toISOString(),
    threshold_percent: record.threshold,
    attempt: record.attempt,
    url: record.url,
    status_code: record.statusCode,
    error: record.error,
    delivered: record.delivered,
    duration_ms: record.durationMs,
    created_at: record.createdAt.toISOString(),
  };
}

export function createAlertSettings(deps: AlertSettingsDeps) {
  const requireWorkspace = async (id: string) => {
    const workspace = await deps.workspaces.get(id);
    if (!workspace) throw createUnknownWorkspaceError(id, "id");
    return workspace;
  };
  /** The webhook's URL and thresholds before and after; never its signing secret. */
  const webhookAudit =
    (
      workspaceId: string,
      before: { url: string; thresholds: number[] | null } | null,
      after: { url: string; thresholds: number[] | null } | null,
    ): AuditOf<void> =>
    () => ({
      action: "workspace.alert_webhook_updated",
      actor: DEFAULT_ACTOR,
      workspaceId,
      apiKeyId: null,
      details: {
        before: { webhook: before === null ? null : { url: before.url, thresholds: before.thresholds } },
        after: { webhook: after },
      },
    });
  return {
    async setKeyThresholds(keyId: string, value: unknown) {
      const thresholds = readThresholds(value, "thresholds");
      const key = await deps.apiKeys.get(keyId);
      if (!key) throw GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
      const before = await deps.alerts.getKeyThresholds(key.id);
      await deps.alerts.setKeyThresholds(key.id, thresholds, () => ({
        action: "key.alert_thresholds_updated",
        actor: DEFAULT_ACTOR,
        workspaceId: key.workspaceId,
        apiKeyId: key.id,
        details: { before: { thresholds: before }, after: { thresholds } },
      }));
      return { api_key_id: key.id, thresholds };
    },
    async getKeyThresholds(keyId: string) {
      const key = await deps.apiKeys.get(keyId);
      if (!key) throw GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
      return { api_key_id: key.id, thresholds: await deps.alerts.getKeyThresholds(key.id) };
    },
    /** The secret is new on every call and returned only here. */
    async setWebhook(workspaceId: string, input: { url: unknown; thresholds?: unknown }) {
      const workspace = await requireWorkspace(workspaceId);
      if (typeof input.url !== "string" || input.url.trim() === "") {
        throw GatewayError.invalidRequest("url is required", "url");
      }
      const url = input.url.trim();
      const refused = deps.checkWebhookUrl(url);
      if (refused !== null) throw GatewayError.invalidRequest(`url: ${refused}`, "url");
      const thresholds =
        input.thresholds === undefined ? null : readThresholds(input.thresholds, "thresholds");
      const secret = createWebhookSecret();
      const before = await deps.alerts.getWebhook(workspace.id);
      await deps.alerts.setWebhook(
        workspace.id,
        { url, secret, thresholds },
        webhookAudit(workspace.id, before, { url, thresholds }),
      );
      return { workspace_id: workspace.id, url, thresholds, secret };
    },
    async getWebhook(workspaceId: string) {
      const workspace = await requireWorkspace(workspaceId);
      const webhook = await deps.alerts.getWebhook(workspace.id);
      return {
        workspace_id: workspace.id,
        webhook: webhook === null ? null : { url: webhook.url, thresholds: webhook.thresholds },
      };
    },
    async removeWebhook(workspaceId: string) {
      const workspace = await requireWorkspace(workspaceId);
      const before = await deps.alerts.getWebhook(workspace.id);
      await deps.alerts.setWebhook(workspace.id, null, webhookAudit(workspace.id, before, null));
      return { workspace_id: workspace.id, webhook: null };
    },
    async listDeliveries(workspaceId: string, limit: number) {
      const workspace = await requireWorkspace(workspaceId);
      return { data: (await deps.alerts.listDeliveries(workspace.id, limit)).map(encodeDelivery) };
    },
  };
}

/** The settings with webhook URLs checked by the outbound rules deliveries follow (the CLI's direct path). */
export function createCheckedAlertSettings(
  deps: Omit<AlertSettingsDeps, "checkWebhookUrl">,
  policy: WebhookPolicy,
) {
  return createAlertSettings({ ...deps, checkWebhookUrl: (url) => checkWebhookUrl(url, policy) });
}
