/**
 * Where the CLI's commands go. A running gateway is asked through its admin API, because embedded
 * PGlite admits one process only and because running instances then see key changes at once.
 * With no gateway answering, the CLI opens the store itself (PostgreSQL or the embedded folder).
 */
import { resolve } from "node:path";
import { type AdminService, createAdminService } from "../admin/admin-service.js";
import { getAdminTokenPath, readAdminToken } from "../admin/admin-token.js";
import { GatewayError } from "../errors/gateway-error.js";
import { openSpendGuard } from "../limits/open-spend-guard.js";
import { openStore } from "../storage/open-store.js";
import { openSharedState } from "../storage/shared-state.js";
import type { SharedState } from "../storage/types.js";
import { createHttpAdminClient } from "./http-admin-client.js";

const PROBE_TIMEOUT_MS = 1_000;
/** The CLI admits no requests, so its guard's lease time is never used. */
const CLI_LEASE_TTL_MS = 120_000;

export interface AdminTransport {
  admin: AdminService;
  /** "http": through a running gateway; "direct": the CLI opened the store. */
  kind: "http" | "direct";
  close(): Promise<void>;
}

export interface AdminTransportEnvironment {
  env: NodeJS.ProcessEnv;
  /** Where non-fatal notes go (stderr). */
  warn(message: string): void;
}

export async function openAdminTransport({ env, warn }: AdminTransportEnvironment): Promise<AdminTransport> {
  const gatewayUrl = env.GATEWAY_URL || `http://127.0.0.1:${env.PORT || 8080}`;
  const dataDir = resolve(env.GATEWAY_DATA_DIR || "./.data");

  if (await isGatewayRunning(gatewayUrl)) {
    const token = env.INTERNAL_SHARED_SECRET || (await readAdminToken(dataDir));
    if (!token) {
      throw GatewayError.invalidRequest(
        `A gateway is running at ${gatewayUrl} but no admin token is available: set INTERNAL_SHARED_SECRET, ` +
          `or GATEWAY_DATA_DIR to the gateway's data folder (token file ${getAdminTokenPath(dataDir)}).`,
      );
    }
    return { admin: createHttpAdminClient(gatewayUrl, token), kind: "http", close: async () => {} };
  }

  const store = await openStore({ databaseUrl: env.DATABASE_URL || undefined, dataDir });
  let state: SharedState;
  try {
    state = await openSharedState({ redisUrl: env.REDIS_URL || undefined });
  } catch (error) {
    // Key-change broadcasts are an optimisation; gateways still pick changes up when caches expire.
    warn(`warning: ${(error as Error).message}; running gateways will see key changes within 30 s`);
    state = await openSharedState({});
  }
  // With Redis, credit changes drop the gateways' balance counter at once and a total reset is
  // timed on the limits' clock; without it there is no shared counter to tell.
  const spendGuard = env.REDIS_URL
    ? await openSpendGuard({
        keyLimits: store.keyLimits,
        redisUrl: env.REDIS_URL,
        leaseTtlMs: CLI_LEASE_TTL_MS,
      })
    : undefined;
  return {
    admin: createAdminService({ store, state, spendGuard }),
    kind: "direct",
    async close() {
      await Promise.allSettled([state.close(), spendGuard?.close(), store.close()]);
    },
  };
}

async function isGatewayRunning(gatewayUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${gatewayUrl.replace(/\/+$/, "")}/healthz`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
