/**
 * What budget alerts need from storage (storage/sql/alert-repository.ts implements it). Money is
 * integer micro-USD; thresholds are whole percent of a limit (1..1000).
 */
import type { AuditOf, SpendWindowName } from "../limits/ports.js";

export interface AlertWebhook {
  url: string;
  /** Signs every body (HMAC-SHA256); shown once, when set. */
  secret: string;
  /** The thresholds of the workspace's keys without their own; null: none. */
  thresholds: number[] | null;
}

/** Where one key's alerts go and at which thresholds; null when it has no webhook or no thresholds. */
export interface AlertTarget {
  workspaceId: string;
  thresholds: number[];
  url: string;
  secret: string;
}

export interface AlertClaim {
  keyId: string;
  workspaceId: string;
  window: SpendWindowName;
  windowStart: Date;
  threshold: number;
  spentMicroUsd: number;
  limitMicroUsd: number;
}

export interface AlertDelivery {
  alertId: string;
  workspaceId: string;
  keyId: string;
  window: SpendWindowName;
  windowStart: Date;
  threshold: number;
  attempt: number;
  url: string;
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
  durationMs: number;
}

export interface AlertDeliveryRecord extends AlertDelivery {
  id: string;
  createdAt: Date;
}

/** What `GET /api/v1/key` shows of a key's alerts, read in one statement. */
export interface KeyAlertStatus {
  /** The key's own thresholds; null: none (the workspace's apply). */
  keyThresholds: number[] | null;
  /** The workspace webhook's default thresholds; null: none (or no webhook). */
  workspaceThresholds: number[] | null;
  /** Whether the workspace has a webhook (without one, nothing is sent). */
  webhook: boolean;
  /** The thresholds claimed in the windows that start exactly at the given starts. */
  crossed: Array<{ window: SpendWindowName; threshold: number; claimedAt: Date }>;
}

export interface AlertRepository {
  getKeyThresholds(keyId: string): Promise<number[] | null>;
  /** null removes the key's own thresholds (the workspace's then apply). */
  setKeyThresholds(keyId: string, thresholds: number[] | null, audit?: AuditOf<void>): Promise<void>;
  getWebhook(workspaceId: string): Promise<AlertWebhook | null>;
  /** null removes the webhook. */
  setWebhook(workspaceId: string, webhook: AlertWebhook | null, audit?: AuditOf<void>): Promise<void>;
  readTarget(keyId: string, workspaceId: string): Promise<AlertTarget | null>;
  /** true for the one caller that claimed it first, whatever instance it runs on. */
  claim(claim: AlertClaim): Promise<boolean>;
  /** The thresholds crossed in windows starting at or after the given starts. */
  listClaims(
    keyId: string,
    windowStarts: Record<SpendWindowName, Date>,
  ): Promise<Array<{ window: SpendWindowName; threshold: number; claimedAt: Date }>>;
  /** Thresholds, webhook presence and the claims of the current windows, in one statement. */
  readKeyStatus(
    keyId: string,
    workspaceId: string,
    currentWindowStarts: Record<SpendWindowName, Date>,
  ): Promise<KeyAlertStatus>;
  recordDelivery(delivery: AlertDelivery): Promise<void>;
  /** Newest first. */
  listDeliveries(workspaceId: string, limit: number): Promise<AlertDeliveryRecord[]>;
}
