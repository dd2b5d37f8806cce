/** Budget alerts: thresholds, webhooks, claims and delivery attempts (migration 0021). */
import type { AlertDeliveryRecord, AlertRepository } from "../../alerts/ports.js";
import type { SpendWindowName } from "../../limits/ports.js";
import { changeWithAudit } from "./audit-rows.js";
import { createId } from "./create-id.js";
import { readInteger } from "./read-integer.js";
import type { SqlClient } from "./sql-client.js";

function readThresholds(value: unknown): number[] | null {
  if (value === null || value === undefined) return null;
  return (value as unknown[]).map((item) => Number(item));
}

/** PostgreSQL array text of integers: `{50,80,100}`. */
function writeThresholds(thresholds: number[] | null): string | null {
  return thresholds === null ? null : `{${thresholds.join(",")}}`;
}

export function createAlertRepository(client: SqlClient): AlertRepository {
  return {
    async getKeyThresholds(keyId) {
      const [row] = await client.query<{ thresholds: unknown }>(
        "SELECT thresholds FROM key_alert_thresholds WHERE api_key_id = $1",
        [keyId],
      );
      return row === undefined ? null : readThresholds(row.thresholds);
    },

    setKeyThresholds(keyId, thresholds, audit) {
      return changeWithAudit(client, audit, async (tx) => {
        if (thresholds === null) {
          await tx.query("DELETE FROM key_alert_thresholds WHERE api_key_id = $1", [keyId]);
          return;
        }
        await tx.query(
          `INSERT INTO key_alert_thresholds (api_key_id, thresholds) VALUES ($1, $2::integer[])
           ON CONFLICT (api_key_id) DO UPDATE SET thresholds = EXCLUDED.thresholds, updated_at = now()`,
          [keyId, writeThresholds(thresholds)],
        );
      });
    },

    async getWebhook(workspaceId) {
      const [row] = await client.query<{ url: string; secret: string; thresholds: unknown }>(
        "SELECT url, secret, thresholds FROM workspace_alert_webhooks WHERE workspace_id = $1",
        [workspaceId],
      );
      return row === undefined
        ? null
        : { url: row.url, secret: row.secret, thresholds: readThresholds(row.thresholds) };
    },

    setWebhook(workspaceId, webhook, audit) {
      return changeWithAudit(client, audit, async (tx) => {
        if (webhook === null) {
          await tx.query("DELETE FROM workspace_alert_webhooks WHERE workspace_id = $1", [workspaceId]);
          return;
        }
        await tx.query(
          `INSERT INTO workspace_alert_webhooks (workspace_id, url, secret, thresholds)
           VALUES ($1, $2, $3, $4::integer[])
           ON CONFLICT (workspace_id) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret,
             thresholds = EXCLUDED.thresholds, updated_at = now()`,
          [workspaceId, webhook.url, webhook.secret, writeThresholds(webhook.thresholds)],
        );
      });
    },

    async readTarget(keyId, workspaceId) {
      const [row] = await client.query<{ url: string; secret: string; thresholds: unknown }>(
        `SELECT w.url, w.secret, COALESCE(k.thresholds, w.thresholds) AS thresholds
         FROM workspace_alert_webhooks w
         LEFT JOIN key_alert_thresholds k ON k.api_key_id = $1
         WHERE w.workspace_id = $2`,
        [keyId, workspaceId],
      );
      const thresholds = row === undefined ? null : readThresholds(row.thresholds);
      if (row === undefined || thresholds === null || thresholds.length === 0) return null;
      return { workspaceId, thresholds, url: row.url, secret: row.secret };
    },

    async claim(claim) {
      const rows = await client.query(
        `INSERT INTO alert_claims (api_key_id, spend_window, window_start, threshold, workspace_id,
           spent_micro_usd, limit_micro_usd)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT DO NOTHING RETURNING threshold`,
        [
          claim.keyId,
          claim.window,
          claim.windowStart,
          claim.threshold,
          claim.workspaceId,
          claim.spentMicroUsd,
          claim.limitMicroUsd,
        ],
      );
      return rows.length === 1;
    },

    async listClaims(keyId, starts) {
      const rows = await client.query<{ spend_window: string; threshold: unknown; claimed_at: Date }>(
        `SELECT spend_window, threshold, claimed_at FROM alert_claims
         WHERE api_key_id = $1 AND (
           (spend_window = 'daily' AND window_start >= $2) OR
           (spend_window = 'monthly' AND window_start >= $3) OR
           (spend_window = 'total' AND window_start >= $4))
         ORDER BY claimed_at, threshold`,
        [keyId, starts.daily, starts.monthly, starts.total],
      );
      return rows.map((row) => ({
        window: row.spend_window as SpendWindowName,
        threshold: Number(row.threshold),
        claimedAt: new Date(row.claimed_at),
      }));
    },

    async readKeyStatus(keyId, workspaceId, starts) {
      // One statement: the primary key of alert_claims starts with the key id, so the claims are an
      // index range; the thresholds are one row each.
      const [row] = await client.query<{
        key_thresholds: unknown;
        workspace_thresholds: unknown;
        webhook: boolean;
        claims: unknown;
      }>(
        `SELECT k.thresholds AS key_thresholds, w.thresholds AS workspace_thresholds,
           w.workspace_id IS NOT NULL AS webhook,
           (SELECT COALESCE(json_agg(json_build_array(c.spend_window, c.threshold, c.claimed_at)
                      ORDER BY c.claimed_at, c.threshold), '[]'::json)
            FROM alert_claims c
            WHERE c.api_key_id = $1 AND (
              (c.spend_window = 'daily' AND c.window_start = $3) OR
              (c.spend_window = 'monthly' AND c.window_start = $4) OR
              (c.spend_window = 'total' AND c.window_start = $5))) AS claims
         FROM (SELECT 1) AS one
         LEFT JOIN key_alert_thresholds k ON k.api_key_id = $1
         LEFT JOIN workspace_alert_webhooks w ON w.workspace_id = $2`,
        [keyId, workspaceId, starts.daily, starts.monthly, starts.total],
      );
      const claims = (
        typeof row?.claims === "string" ? JSON.parse(row.claims) : (row?.claims ?? [])
      ) as Array<[string, unknown, string]>;
      return {
        keyThresholds: readThresholds(row?.key_thresholds),
        workspaceThresholds: readThresholds(row?.workspace_thresholds),
        webhook: row?.webhook === true,
        crossed: claims.map(([window, threshold, claimedAt]) => ({
          window: window as SpendWindowName,
          threshold: Number(threshold),
          claimedAt: new Date(claimedAt),
        })),
      };
    },

    async recordDelivery(delivery) {
      await client.query(
        `INSERT INTO alert_deliveries (id, alert_id, workspace_id, api_key_id, spend_window, window_start,
           threshold, attempt, url, status_code, error, delivered, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          createId("adl"),
          delivery.alertId,
          delivery.workspaceId,
          delivery.keyId,
          delivery.window,
          delivery.windowStart,
          delivery.threshold,
          delivery.attempt,
          delivery.url,
          delivery.statusCode,
          delivery.error,
          delivery.delivered,
          delivery.durationMs,
        ],
      );
    },

    async listDeliveries(workspaceId, limit) {
      const rows = await client.query<Record<string, unknown>>(
        `SELECT * FROM alert_deliveries WHERE workspace_id = $1 ORDER BY created_at DESC, attempt DESC LIMIT $2`,
        [workspaceId, limit],
      );
      return rows.map(
        (row): AlertDeliveryRecord => ({
          id: String(row.id),
          alertId: String(row.alert_id),
          workspaceId: String(row.workspace_id),
          keyId: String(row.api_key_id),
          window: row.spend_window as SpendWindowName,
          windowStart: new Date(row.window_start as Date),
          threshold: Number(row.threshold),
          attempt: Number(row.attempt),
          url: String(row.url),
          statusCode: row.status_code === null ? null : Number(row.status_code),
          error: row.error === null ? null : String(row.error),
          delivered: row.delivered === true,
          durationMs: readInteger(row.duration_ms, "duration_ms"),
          createdAt: new Date(row.created_at as Date),
        }),
      );
    },
  };
}
