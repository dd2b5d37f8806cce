// Admin API calls of the budget-alert parts of the console (docs/limits.md, "Budget alerts"):
// a key's own thresholds, its workspace's webhook and default thresholds, and the delivery log.
import { call } from "./api.js";

const segment = (value) => encodeURIComponent(String(value));

export const alertAdmin = {
  /** `{api_key_id, thresholds}`; null thresholds: the workspace's apply. */
  keyThresholds: (keyId) => call("GET", `/keys/${segment(keyId)}/alert-thresholds`),
  setKeyThresholds: (keyId, thresholds) =>
    call("PATCH", `/keys/${segment(keyId)}/alert-thresholds`, { thresholds }),
  /** `{workspace_id, webhook: {url, thresholds} | null}`: never the secret. */
  webhook: (workspaceId) => call("GET", `/workspaces/${segment(workspaceId)}/alert-webhook`),
  /** `{url: null}` removes it; otherwise the answer holds a new signing `secret`, shown only here. */
  setWebhook: (workspaceId, body) => call("PATCH", `/workspaces/${segment(workspaceId)}/alert-webhook`, body),
  /** `{data: [attempt]}`, newest first. */
  deliveries: (workspaceId, limit = 50) =>
    call("GET", `/workspaces/${segment(workspaceId)}/alert-deliveries?limit=${segment(limit)}`),
};

/**
 * "50, 80 100" → [50, 80, 100]; "" → null. Numbers are passed on as typed (a piece that is no
 * number stays text) so the API's validation, not this page, decides and names what is wrong.
 */
export function readThresholdsInput(text) {
  const pieces = String(text ?? "")
    .split(/[\s,]+/)
    .filter(Boolean);
  if (pieces.length === 0) return null;
  return pieces.map((piece) => (/^-?\d+(\.\d+)?$/.test(piece) ? Number(piece) : piece));
}

/** [50, 80] → "50, 80"; null → "". */
export function thresholdsText(thresholds) {
  return thresholds ? thresholds.join(", ") : "";
}
