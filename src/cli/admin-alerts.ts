/**
 * Budget-alert settings as the CLI changes them (`key update --alert-thresholds`, `workspace
 * alert-webhook`): the admin API's documents whichever way the CLI reaches them. Through a running
 * gateway they are its answers; with the database opened directly, the same validation
 * (admin/alert-settings.ts) runs here, the webhook URL checked by the same outbound rules.
 */
import { createCheckedAlertSettings } from "../admin/alert-settings.js";
import type { Store } from "../storage/store.js";

export interface KeyThresholdsJson {
  api_key_id: string;
  thresholds: number[] | null;
}

/** `PATCH …/alert-webhook` answers `url`, `thresholds` and the new `secret`; removing, `webhook: null`. */
export interface WebhookJson {
  workspace_id: string;
  url?: string;
  thresholds?: number[] | null;
  secret?: string;
  webhook?: { url: string; thresholds: number[] | null } | null;
}

export interface AdminAlerts {
  setKeyThresholds(keyId: string, thresholds: number[] | null): Promise<KeyThresholdsJson>;
  getKeyThresholds(keyId: string): Promise<KeyThresholdsJson>;
  getWebhook(workspaceId: string): Promise<WebhookJson>;
  /** `url` null removes the webhook; `thresholds` absent: none (only keys with their own alert). */
  setWebhook(
    workspaceId: string,
    input: { url: string | null; thresholds?: number[] | null },
  ): Promise<WebhookJson>;
}

export type AdminCallJson = <T>(method: string, path: string, body?: unknown) => Promise<T>;

export function createHttpAdminAlerts(call: AdminCallJson): AdminAlerts {
  const segment = encodeURIComponent;
  return {
    setKeyThresholds: (keyId, thresholds) =>
      call("PATCH", `/keys/${segment(keyId)}/alert-thresholds`, { thresholds }),
    getKeyThresholds: (keyId) => call("GET", `/keys/${segment(keyId)}/alert-thresholds`),
    getWebhook: (workspaceId) => call("GET", `/workspaces/${segment(workspaceId)}/alert-webhook`),
    setWebhook: (workspaceId, input) =>
      call("PATCH", `/workspaces/${segment(workspaceId)}/alert-webhook`, input),
  };
}

export function createDirectAdminAlerts(
  store: Pick<Store, "alerts" | "apiKeys" | "workspaces">,
  policy: { allowHttp: boolean; allowLoopback: boolean },
): AdminAlerts {
  const settings = createCheckedAlertSettings(
    { alerts: store.alerts, apiKeys: store.apiKeys, workspaces: store.workspaces },
    policy,
  );
  return {
    setKeyThresholds: (keyId, thresholds) => settings.setKeyThresholds(keyId, thresholds),
    getKeyThresholds: (keyId) => settings.getKeyThresholds(keyId),
    getWebhook: (workspaceId) => settings.getWebhook(workspaceId),
    setWebhook: (workspaceId, input) =>
      input.url === null ? settings.removeWebhook(workspaceId) : settings.setWebhook(workspaceId, input),
  };
}
