/**
 * Workspace and key administration, shared by the admin HTTP routes and the admin CLI. Validates
 * everything it is given (callers may pass raw user input) and turns USD text into exact micro-USD.
 */

import type { ApiKeyRecord, ApiKeyStatus, Workspace } from "../auth/accounts.js";
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import { BALANCE_CHANGED_CHANNEL, encodeBalanceChange } from "../auth/balance-channel.js";
import type { Announcements } from "../auth/ports.js";
import { modelConfigSchema } from "../config/config-schema.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { KeyLimitChanges, KeyLimits } from "../limits/ports.js";
import { DEFAULT_WORKSPACE_LIST_LIMIT, MAX_WORKSPACE_LIST_LIMIT } from "./admin-wire.js";
import { DEFAULT_ACTOR, describeKey, describeWorkspace } from "./audit-admin-change.js";
import { parseUsdToMicroUsd } from "./parse-usd.js";
import type { AdminStore } from "./ports.js";
import { isStorableText, STORABLE_TEXT_RULE } from "./storable-text.js";
import { createUnknownWorkspaceError } from "./workspace-errors.js";

export interface CreateWorkspaceInput {
  name: string;
  /** Decimal USD, e.g. "5" or "0.000001". Default 0. */
  creditsUsd?: string | number;
  invoicing?: boolean;
  /** A second workspace of the same name is refused unless this is true. */
  allowDuplicateName?: boolean;
  /** Who made the change, for the audit log (default "admin"). */
  actor?: string;
}

/** `workspace list`: oldest first, at most `limit` (default 100), only those named `name` when given. */
export interface ListWorkspacesInput {
  name?: string;
  limit?: number;
}

export interface CreateKeyInput {
  workspaceId: string;
  name?: string;
  /** Allowlist of model slugs (`creator/model`); absent: every model. */
  models?: string[];
  expiresAt?: Date;
  memberId?: string;
  /** Spend limits, decimal USD ("5", "0.25"); absent: none. */
  dailyLimitUsd?: string | number;
  monthlyLimitUsd?: string | number;
  totalLimitUsd?: string | number;
  /** Absent: the config's default_requests_per_minute applies. */
  requestsPerMinute?: number;
  /** The key's own response-cache policy in seconds; absent or null: its workspace's. */
  responseCacheTtlSeconds?: number | null;
  /** Who made the change, for the audit log (default "admin"). */
  actor?: string;
}

/** `workspace update`: an absent field stays as it is; a null cache policy clears it. */
export interface UpdateWorkspaceInput {
  invoicing?: boolean;
  locked?: boolean;
  /** The response-cache policy of the workspace's keys without their own, seconds; null: none. */
  responseCacheTtlSeconds?: number | null;
  /** Who made the change, for the audit log (default "admin"). */
  actor?: string;
}

/** `key update`: an absent field stays as it is; null clears it (no limit, every model). */
export interface UpdateKeyInput {
  dailyLimitUsd?: string | number | null;
  monthlyLimitUsd?: string | number | null;
  totalLimitUsd?: string | number | null;
  requestsPerMinute?: number | null;
  models?: string[] | null;
  /** A future moment; null: the key never expires. */
  expiresAt?: Date | null;
  /** The key's own response-cache policy in seconds; null: its workspace's. */
  responseCacheTtlSeconds?: number | null;
  // Budget alert thresholds (issue 30, another branch) join here: validated like the limits, stored
  // by the same audit-logged update.
  /** Who made the change, for the audit log (default "admin"). */
  actor?: string;
}

export interface TotalReset {
  key: ApiKeyRecord;
  limits: KeyLimits;
  /** Spend of the window that was closed, micro-USD. */
  previousSpendMicroUsd: number;
  resetAt: Date;
}

/** What the admin service needs of the spend guard: the limits' clock and the balance counter. */
export interface AdminLimitHooks {
  now(): Promise<number>;
  forgetBalance(workspaceId: string): Promise<void>;
}

export interface AdminService {
  createWorkspace(input: CreateWorkspaceInput): Promise<Workspace>;
  getWorkspace(id: string): Promise<Workspace>;
  listWorkspaces(input?: ListWorkspacesInput): Promise<Workspace[]>;
  /** Adds credit; a negative amount removes some. Audit-logged, like every change below. */
  creditWorkspace(id: string, usd: string | number, actor?: string): Promise<Workspace>;
  updateWorkspace(id: string, changes: UpdateWorkspaceInput): Promise<Workspace>;
  /** `secret` is the key material: returned here once, never stored. */
  createKey(input: CreateKeyInput): Promise<{ key: ApiKeyRecord; secret: string; limits?: KeyLimits }>;
  getKey(id: string): Promise<{ key: ApiKeyRecord; limits: KeyLimits }>;
  /** Limits, rate limit, allowlist and expiry; audit-logged. */
  updateKey(id: string, changes: UpdateKeyInput): Promise<{ key: ApiKeyRecord; limits: KeyLimits }>;
  /** Starts a new total-spend window; audit-logged with the actor and the previous spend. */
  resetKeyTotal(id: string, actor: string): Promise<TotalReset>;
  setKeyStatus(id: string, status: ApiKeyStatus, actor?: string): Promise<ApiKeyRecord>;
  listKeys(workspaceId: string): Promise<ApiKeyRecord[]>;
}

export const KEY_STATUSES: readonly ApiKeyStatus[] = ["active", "disabled", "revoked"];
const MAX_TEXT_LENGTH = 200;
/** Far above any real key's need; keeps the rate window's memory bounded. */
export const MAX_REQUESTS_PER_MINUTE = 1_000_000;
const MAX_MODELS = 1_000;

/** The ceiling of response_cache.max_ttl_seconds (and migration 0020's check). */
export const MAX_CACHE_TTL_SECONDS = 30 * 86_400;

const modelSlugSchema = modelConfigSchema.shape.slug;

export function createAdminService({
  store,
  state,
  spendGuard,
  maxCacheTtlSeconds = MAX_CACHE_TTL_SECONDS,
}: {
  store: AdminStore;
  state: Announcements;
  /** Absent (CLI without Redis): credit changes reach the balance counter when it expires (≤ 60 s). */
  spendGuard?: AdminLimitHooks;
  /**
   * The longest response-cache policy accepted: the gateway's response_cache.max_ttl_seconds; the
   * CLI's direct path, which reads no gateway config, accepts up to the ceiling (the gateway caps
   * a longer policy at its own maximum when it applies it).
   */
  maxCacheTtlSeconds?: number;
}): AdminService {
  const readCacheTtl = (value: unknown) => readCacheTtlSeconds(value, maxCacheTtlSeconds);
  const readActor = (value: unknown) => readText(value, "actor", { required: false }) || DEFAULT_ACTOR;
  async function requireWorkspace(id: unknown, param: string): Promise<Workspace> {
    const workspaceId = readId(id, param);
    const workspace = await store.workspaces.get(workspaceId);
    if (!workspace) throw createUnknownWorkspaceError(workspaceId, param);
    return workspace;
  }

  return {
    async createWorkspace(input) {
      const name = readText(input.name, "name", { required: true });
      const creditsMicroUsd =
        input.creditsUsd === undefined ? 0 : parseUsdToMicroUsd(input.creditsUsd, { param: "credits_usd" });
      const invoicing = readOptionalBoolean(input.invoicing, "invoicing") ?? false;
      const allowDuplicate = readOptionalBoolean(input.allowDuplicateName, "allow_duplicate_name") ?? false;
      const actor = readActor(input.actor);
      return store.workspaces.create(
        { name, creditsMicroUsd, invoicing, uniqueName: !allowDuplicate },
        (workspace) => ({
          action: "workspace.created",
          actor,
          workspaceId: workspace.id,
          apiKeyId: null,
          details: { after: describeWorkspace(workspace) },
        }),
      );
    },

    getWorkspace: (id) => requireWorkspace(id, "id"),

    async listWorkspaces(input = {}) {
      const name = readText(input.name, "name", { required: false });
      const limit = input.limit ?? DEFAULT_WORKSPACE_LIST_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_WORKSPACE_LIST_LIMIT) {
        throw GatewayError.invalidRequest(
          `limit must be an integer from 1 to ${MAX_WORKSPACE_LIST_LIMIT}`,
          "limit",
        );
      }
      return store.workspaces.list({ name: name || undefined, limit });
    },

    async creditWorkspace(id, usd, actorName) {
      const amount = parseUsdToMicroUsd(usd, { param: "usd", allowNegative: true, allowZero: false });
      const actor = readActor(actorName);
      const workspace = await store.workspaces.credit(readId(id, "id"), amount, (credited) => ({
        action: "workspace.credited",
        actor,
        workspaceId: credited.id,
        apiKeyId: null,
        details: {
          amount_micro_usd: String(amount),
          before: { balance_micro_usd: String(credited.balanceMicroUsd - amount) },
          after: { balance_micro_usd: String(credited.balanceMicroUsd) },
        },
      }));
      // After the commit: the limit counters re-seed the balance from Postgres (here at once, and
      // on every instance that hears the announcement).
      await spendGuard?.forgetBalance(workspace.id);
      await announce(state, BALANCE_CHANGED_CHANNEL, encodeBalanceChange(workspace.id));
      return workspace;
    },

    async updateWorkspace(id, changes) {
      const invoicing = readOptionalBoolean(changes.invoicing, "invoicing");
      const locked = readOptionalBoolean(changes.locked, "locked");
      const responseCacheTtlSeconds = readCacheTtl(changes.responseCacheTtlSeconds);
      if (invoicing === undefined && locked === undefined && responseCacheTtlSeconds === undefined) {
        throw GatewayError.invalidRequest(
          "Nothing to update: give invoicing, locked and/or response_cache_ttl_seconds",
        );
      }
      const actor = readActor(changes.actor);
      const before = await requireWorkspace(id, "id");
      const workspace = await store.workspaces.update(
        before.id,
        { invoicing, locked, responseCacheTtlSeconds },
        (updated) => ({
          action: "workspace.updated",
          actor,
          workspaceId: updated.id,
          apiKeyId: null,
          details: { before: describeWorkspace(before), after: describeWorkspace(updated) },
        }),
      );
      // A lock, invoicing or cache-policy change concerns every key of the workspace.
      await announce(state, KEY_CHANGED_CHANNEL, JSON.stringify({ workspaceId: workspace.id }));
      return workspace;
    },

    async createKey(input) {
      const workspace = await requireWorkspace(input.workspaceId, "workspace_id");
      const name = readText(input.name, "name", { required: false }) ?? "";
      const memberId = readText(input.memberId, "member_id", { required: false }) ?? null;
      const allowedModels = input.models === undefined ? null : readModels(input.models);
      const expiresAt = input.expiresAt === undefined ? null : readFutureDate(input.expiresAt, "expires_at");
      const limits = {
        dailyMicroUsd: readLimit(input.dailyLimitUsd, "daily_limit_usd") ?? null,
        monthlyMicroUsd: readLimit(input.monthlyLimitUsd, "monthly_limit_usd") ?? null,
        totalMicroUsd: readLimit(input.totalLimitUsd, "total_limit_usd") ?? null,
        requestsPerMinute: readRequestsPerMinute(input.requestsPerMinute) ?? null,
      };
      const responseCacheTtlSeconds = readCacheTtl(input.responseCacheTtlSeconds) ?? null;
      const actor = readActor(input.actor);
      const created = await store.apiKeys.create(
        {
          workspaceId: workspace.id,
          name,
          allowedModels,
          expiresAt,
          memberId,
          limits,
          responseCacheTtlSeconds,
        },
        ({ key }) => ({
          action: "key.created",
          actor,
          workspaceId: workspace.id,
          apiKeyId: key.id,
          details: {
            after: Object.assign(describeKey(key), {
              daily_limit_micro_usd: limits.dailyMicroUsd === null ? null : String(limits.dailyMicroUsd),
              monthly_limit_micro_usd:
                limits.monthlyMicroUsd === null ? null : String(limits.monthlyMicroUsd),
              total_limit_micro_usd: limits.totalMicroUsd === null ? null : String(limits.totalMicroUsd),
              requests_per_minute: limits.requestsPerMinute,
            }),
          },
        }),
      );
      return { key: created.key, secret: created.secret, limits: { totalResetAt: null, ...limits } };
    },

    async getKey(id) {
      const keyId = readId(id, "id");
      const [key, limits] = await Promise.all([store.apiKeys.get(keyId), store.keyLimits.get(keyId)]);
      if (!key || !limits) throw GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
      return { key, limits };
    },

    async updateKey(id, input) {
      const keyId = readId(id, "id");
      const changes: KeyLimitChanges = {
        dailyMicroUsd: readLimit(input.dailyLimitUsd, "daily_limit_usd"),
        monthlyMicroUsd: readLimit(input.monthlyLimitUsd, "monthly_limit_usd"),
        totalMicroUsd: readLimit(input.totalLimitUsd, "total_limit_usd"),
        requestsPerMinute: readRequestsPerMinute(input.requestsPerMinute),
        allowedModels:
          input.models === undefined ? undefined : input.models === null ? null : readModels(input.models),
        expiresAt:
          input.expiresAt === undefined || input.expiresAt === null
            ? input.expiresAt
            : readFutureDate(input.expiresAt, "expires_at"),
        responseCacheTtlSeconds: readCacheTtl(input.responseCacheTtlSeconds),
      };
      if (Object.values(changes).every((value) => value === undefined)) {
        throw GatewayError.invalidRequest(
          "Nothing to update: give a daily, monthly or total limit, requests per minute, models, " +
            "expires_at or response_cache_ttl_seconds",
        );
      }
      const actor = readText(input.actor, "actor", { required: false }) || "admin";
      const updated = await store.keyLimits.update(keyId, changes, actor);
      // Limits and allowlist are cached for admission on every instance.
      await announceKeyChange(state, keyId);
      return updated;
    },

    async resetKeyTotal(id, actor) {
      const keyId = readId(id, "id");
      const who = readText(actor, "actor", { required: true });
      // The limits' clock opens the new window, so requests it admits afterwards fall into it.
      const at = spendGuard ? new Date(await spendGuard.now()) : undefined;
      const reset = await store.keyLimits.resetTotal(keyId, { actor: who, at });
      await announceKeyChange(state, keyId);
      return reset;
    },

    async setKeyStatus(id, status, actorName) {
      const keyId = readId(id, "id");
      const actor = readActor(actorName);
      if (!KEY_STATUSES.includes(status)) {
        throw GatewayError.invalidRequest(`status must be one of ${KEY_STATUSES.join(", ")}`, "status");
      }
      const existing = await store.apiKeys.get(keyId);
      if (!existing) throw GatewayError.invalidRequest(`Unknown API key "${keyId}"`, "id");
      if (existing.status === "revoked" && status !== "revoked") {
        throw GatewayError.invalidRequest(`API key "${keyId}" is revoked; revocation is final`, "id");
      }
      const key = await store.apiKeys.setStatus(keyId, status, (key) => ({
        action: "key.status_changed",
        actor,
        workspaceId: key.workspaceId,
        apiKeyId: key.id,
        details: { before: { status: existing.status }, after: { status: key.status } },
      }));
      await announceKeyChange(state, keyId);
      return key;
    },

    async listKeys(workspaceId) {
      const workspace = await requireWorkspace(workspaceId, "workspace_id");
      return store.apiKeys.list(workspace.id);
    },
  };
}

/**
 * Tells every instance to drop its cached copy of the key. The database change is already
 * committed, so a failed publish is not an error: the authenticator's cache TTL (well under the
 * 30 s a key change may take to reach every instance) bounds how long a stale entry can live.
 */
async function announceKeyChange(state: Announcements, keyId: string): Promise<void> {
  await announce(state, KEY_CHANGED_CHANNEL, JSON.stringify({ keyId }));
}

async function announce(state: Announcements, channel: string, message: string): Promise<void> {
  try {
    await state.publish(channel, message);
  } catch {
    // See above: propagation then falls back to cache expiry.
  }
}

function readId(value: unknown, param: string): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw GatewayError.invalidRequest(`${param} is required`, param);
  }
  refuseUnstorable(value, param);
  return value.trim();
}

function refuseUnstorable(text: string, param: string): void {
  if (!isStorableText(text)) throw GatewayError.invalidRequest(`${param} ${STORABLE_TEXT_RULE}`, param);
}

function readText(value: unknown, param: string, options: { required: true }): string;
function readText(value: unknown, param: string, options: { required: false }): string | undefined;
function readText(value: unknown, param: string, options: { required: boolean }): string | undefined {
  if (value === undefined || value === null) {
    if (options.required) throw GatewayError.invalidRequest(`${param} is required`, param);
    return undefined;
  }
  if (typeof value !== "string") throw GatewayError.invalidRequest(`${param} must be a string`, param);
  refuseUnstorable(value, param);
  const text = value.trim();
  if (options.required && text === "") throw GatewayError.invalidRequest(`${param} must not be empty`, param);
  if (text.length > MAX_TEXT_LENGTH) {
    throw GatewayError.invalidRequest(`${param} must be at most ${MAX_TEXT_LENGTH} characters`, param);
  }
  return text;
}

/** USD limit → micro-USD; undefined stays undefined (unchanged), null stays null (no limit). */
function readLimit(value: unknown, param: string): number | null | undefined {
  if (value === undefined || value === null) return value;
  return parseUsdToMicroUsd(value, { param });
}

function readRequestsPerMinute(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_REQUESTS_PER_MINUTE) {
    throw GatewayError.invalidRequest(
      `requests_per_minute must be an integer from 1 to ${MAX_REQUESTS_PER_MINUTE}`,
      "requests_per_minute",
    );
  }
  return value;
}

/** A response-cache policy: whole seconds from 1 to `max`; null clears it. */
function readCacheTtlSeconds(value: unknown, max: number): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw GatewayError.invalidRequest(
      `response_cache_ttl_seconds must be a whole number of seconds from 1 to ${max}, or null for no policy`,
      "response_cache_ttl_seconds",
    );
  }
  return value;
}

function readOptionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw GatewayError.invalidRequest(`${param} must be true or false`, param);
  return value;
}

function readModels(models: unknown): string[] {
  if (!Array.isArray(models))
    throw GatewayError.invalidRequest("models must be a list of model slugs", "models");
  if (models.length === 0) {
    // An empty allowlist would allow nothing; omitting the list is how "every model" is said.
    throw GatewayError.invalidRequest("models must not be empty; omit it to allow every model", "models");
  }
  if (models.length > MAX_MODELS) {
    throw GatewayError.invalidRequest(`models may list at most ${MAX_MODELS} slugs`, "models");
  }
  const slugs = new Set<string>();
  for (const model of models) {
    const slug = typeof model === "string" ? model.trim() : model;
    if (!modelSlugSchema.safeParse(slug).success) {
      throw GatewayError.invalidRequest(
        `models: "${String(model)}" is not a model slug of the form creator/model`,
        "models",
      );
    }
    slugs.add(slug as string);
  }
  return [...slugs];
}

function readFutureDate(value: unknown, param: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw GatewayError.invalidRequest(`${param} must be a valid date`, param);
  }
  if (value.getTime() <= Date.now()) {
    throw GatewayError.invalidRequest(`${param} must be in the future, got ${value.toISOString()}`, param);
  }
  return value;
}
