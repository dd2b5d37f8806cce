/** The admin service as seen through a running gateway's admin API (`/internal/admin`). */
import type { AdminService } from "../admin/admin-service.js";
import {
  decodeKey,
  decodeKeyLimits,
  decodeWorkspace,
  type KeyJson,
  type KeyLimitsJson,
  type WorkspaceJson,
} from "../admin/admin-wire.js";
import { ERROR_CATALOG, type ErrorCode } from "../errors/catalog.js";
import { GatewayError } from "../errors/gateway-error.js";
import { type HttpAnswer, sendHttpRequest } from "./send-http-request.js";

const REQUEST_TIMEOUT_MS = 15_000;
const ACTION_BY_STATUS = { active: "enable", disabled: "disable", revoked: "revoke" } as const;

interface KeyWithLimitsJson {
  key: KeyJson;
  limits: KeyLimitsJson;
}

/**
 * `tokenSource` says where `token` came from; a refusal of the token names it, since a stale token
 * file otherwise looks like a bare "wrong token".
 */
export function createHttpAdminClient(baseUrl: string, token: string, tokenSource?: string): AdminService {
  const call = createHttpAdminCaller(baseUrl, token, tokenSource);
  return createClient(call);
}

export type AdminCall = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** One call to the admin API (`path` under `/internal/admin`): the JSON answer, or its error thrown. */
export function createHttpAdminCaller(baseUrl: string, token: string, tokenSource?: string): AdminCall {
  const adminUrl = `${baseUrl.replace(/\/+$/, "")}/internal/admin`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: HttpAnswer;
    try {
      response = await sendHttpRequest(adminUrl + path, {
        method,
        headers: {
          "X-Internal-Token": token,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (error) {
      throw new GatewayError(
        "internal_error",
        `Gateway at ${baseUrl} did not answer: ${(error as Error).message}`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      json = undefined;
    }
    if (response.status >= 200 && response.status < 300 && json !== undefined) return json as T;
    const error = readErrorEnvelope(json, response.status);
    if (error.code !== "invalid_api_key" || tokenSource === undefined) throw error;
    throw new GatewayError(
      "invalid_api_key",
      `The gateway at ${baseUrl} refused the admin token (${error.message}). The token came from ${tokenSource}.`,
    );
  }
  return call;
}

function createClient(call: AdminCall): AdminService {
  const encodePathSegment = encodeURIComponent;

  return {
    async createWorkspace(input) {
      const result = await call<{ workspace: WorkspaceJson }>("POST", "/workspaces", {
        name: input.name,
        credits_usd: input.creditsUsd,
        invoicing: input.invoicing,
        allow_duplicate_name: input.allowDuplicateName,
      });
      return decodeWorkspace(result.workspace);
    },
    async getWorkspace(id) {
      const path = `/workspaces/${encodePathSegment(id)}`;
      return decodeWorkspace((await call<{ workspace: WorkspaceJson }>("GET", path)).workspace);
    },
    async listWorkspaces(input = {}) {
      const query = new URLSearchParams();
      if (input.name !== undefined) query.set("name", input.name);
      if (input.limit !== undefined) query.set("limit", String(input.limit));
      const path = `/workspaces${query.size > 0 ? `?${query}` : ""}`;
      return (await call<{ data: WorkspaceJson[] }>("GET", path)).data.map(decodeWorkspace);
    },
    async creditWorkspace(id, usd) {
      const path = `/workspaces/${encodePathSegment(id)}/credit`;
      return decodeWorkspace((await call<{ workspace: WorkspaceJson }>("POST", path, { usd })).workspace);
    },
    async updateWorkspace(id, changes) {
      const path = `/workspaces/${encodePathSegment(id)}`;
      const body = {
        invoicing: changes.invoicing,
        locked: changes.locked,
        response_cache_ttl_seconds: changes.responseCacheTtlSeconds,
      };
      return decodeWorkspace((await call<{ workspace: WorkspaceJson }>("PATCH", path, body)).workspace);
    },
    async createKey(input) {
      const result = await call<{ key: KeyJson; secret: string; limits?: KeyLimitsJson }>("POST", "/keys", {
        workspace_id: input.workspaceId,
        name: input.name,
        models: input.models,
        expires_at: input.expiresAt?.toISOString(),
        member_id: input.memberId,
        daily_limit_usd: input.dailyLimitUsd,
        monthly_limit_usd: input.monthlyLimitUsd,
        total_limit_usd: input.totalLimitUsd,
        requests_per_minute: input.requestsPerMinute,
        response_cache_ttl_seconds: input.responseCacheTtlSeconds,
      });
      return {
        key: decodeKey(result.key),
        secret: result.secret,
        ...(result.limits ? { limits: decodeKeyLimits(result.limits) } : {}),
      };
    },
    async getKey(id) {
      const result = await call<KeyWithLimitsJson>("GET", `/keys/${encodePathSegment(id)}`);
      return { key: decodeKey(result.key), limits: decodeKeyLimits(result.limits) };
    },
    async updateKey(id, changes) {
      const result = await call<KeyWithLimitsJson>("PATCH", `/keys/${encodePathSegment(id)}`, {
        daily_limit_usd: changes.dailyLimitUsd,
        monthly_limit_usd: changes.monthlyLimitUsd,
        total_limit_usd: changes.totalLimitUsd,
        requests_per_minute: changes.requestsPerMinute,
        models: changes.models,
        response_cache_ttl_seconds: changes.responseCacheTtlSeconds,
        // null (never expires) goes out as null; absent stays absent.
        expires_at: changes.expiresAt === undefined ? undefined : (changes.expiresAt?.toISOString() ?? null),
        actor: changes.actor,
      });
      return { key: decodeKey(result.key), limits: decodeKeyLimits(result.limits) };
    },
    async resetKeyTotal(id, actor) {
      const result = await call<
        KeyWithLimitsJson & { previous_total_spend_micro_usd: string; reset_at: string }
      >("POST", `/keys/${encodePathSegment(id)}/reset-total`, { actor });
      return {
        key: decodeKey(result.key),
        limits: decodeKeyLimits(result.limits),
        previousSpendMicroUsd: Number(result.previous_total_spend_micro_usd),
        resetAt: new Date(result.reset_at),
      };
    },
    async setKeyStatus(id, status) {
      const path = `/keys/${encodePathSegment(id)}/${ACTION_BY_STATUS[status]}`;
      return decodeKey((await call<{ key: KeyJson }>("POST", path)).key);
    },
    async listKeys(workspaceId) {
      const path = `/keys?workspace_id=${encodeURIComponent(workspaceId)}`;
      return (await call<{ data: KeyJson[] }>("GET", path)).data.map(decodeKey);
    },
  };
}

function readErrorEnvelope(json: unknown, status: number): GatewayError {
  const error = (json as { error?: { code?: unknown; message?: unknown; param?: unknown } } | undefined)
    ?.error;
  if (error && typeof error.code === "string" && Object.hasOwn(ERROR_CATALOG, error.code)) {
    return new GatewayError(error.code as ErrorCode, String(error.message ?? "Admin API error"), {
      param: typeof error.param === "string" ? error.param : null,
    });
  }
  return new GatewayError("internal_error", `Admin API answered HTTP ${status} without an error envelope`);
}
