/**
 * Where the CLI's commands go. A running gateway is asked through its admin API, because embedded
 * PGlite admits one process only and because running instances then see key changes at once.
 * With no gateway answering, the CLI opens the store itself (PostgreSQL or the embedded folder).
 *
 * The modules of the direct path (database drivers, PGlite, Redis, the admin service with its
 * schemas) are imported only when that path is taken: loading them costs more than a whole call
 * through a running gateway.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { AdminService } from "../admin/admin-service.js";
import { GatewayError } from "../errors/gateway-error.js";
import { getAdminTokenPath, readAdminToken } from "../storage/data-dir/admin-token.js";
import type { SharedState } from "../storage/store.js";
import { createHttpAdminClient } from "./http-admin-client.js";
import { sendHttpRequest } from "./send-http-request.js";

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
    const { token, source } = await readToken(env, dataDir);
    if (!token) {
      throw GatewayError.invalidRequest(
        `A gateway is running at ${gatewayUrl} but no admin token is available: set INTERNAL_SHARED_SECRET, ` +
          `or GATEWAY_DATA_DIR to the gateway's data folder (token file ${getAdminTokenPath(dataDir)}).`,
      );
    }
    return {
      admin: createHttpAdminClient(gatewayUrl, token, source),
      kind: "http",
      close: async () => {},
    };
  }

  const [{ createAdminService }, { openSpendGuard }, { openStore }, { openSharedState }] = await Promise.all([
    import("../admin/admin-service.js"),
    import("../storage/open-spend-guard.js"),
    import("../storage/open-store.js"),
    import("../storage/shared-state/shared-state.js"),
  ]);
  const store = await openStore({ databaseUrl: env.DATABASE_URL || undefined, dataDir });
  let state: SharedState;
  try {
    state = await openSharedState({
      redisUrl: env.REDIS_URL || undefined,
      prefix: env.REDIS_KEY_PREFIX || undefined,
    });
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
        prefix: env.REDIS_KEY_PREFIX || undefined,
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

/**
 * The admin token and where it came from, said when the gateway refuses it: a token file left by
 * another gateway (or an earlier data folder) is the usual cause.
 */
async function readToken(
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Promise<{ token: string | null; source: string }> {
  if (env.INTERNAL_SHARED_SECRET) {
    return {
      token: env.INTERNAL_SHARED_SECRET,
      source:
        "INTERNAL_SHARED_SECRET in the environment, which is not the secret the running gateway was started with",
    };
  }
  const path = getAdminTokenPath(dataDir);
  const token = await readAdminToken(dataDir);
  const written = token ? (await stat(path)).mtime.toISOString() : "";
  return {
    token,
    source:
      `the token file ${path} (written ${written}), which is not the running gateway's: it may be left ` +
      "over from another gateway or data folder. Set GATEWAY_DATA_DIR to the running gateway's data " +
      "folder, or INTERNAL_SHARED_SECRET to its secret (a gateway started with INTERNAL_SHARED_SECRET " +
      "does not use the file)",
  };
}

async function isGatewayRunning(gatewayUrl: string): Promise<boolean> {
  try {
    const response = await sendHttpRequest(`${gatewayUrl.replace(/\/+$/, "")}/healthz`, {
      method: "GET",
      timeoutMs: PROBE_TIMEOUT_MS,
    });
    return response.status >= 200 && response.status < 300;
  } catch {
    return false;
  }
}
