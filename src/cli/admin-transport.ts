/**
 * Where the CLI's commands go. A running gateway is asked through its admin API, because embedded
 * PGlite admits one process only and because running instances then see key changes at once.
 * With no gateway answering, the CLI opens the store itself (PostgreSQL or the embedded folder).
 * Every command says which it used (`target`), so a key minted into the wrong database is seen.
 *
 * The modules of the direct path (database drivers, PGlite, Redis, the admin service with its
 * schemas) are imported only when that path is taken: loading them costs more than a whole call
 * through a running gateway.
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { AdminService } from "../admin/admin-service.js";
import { GatewayError } from "../errors/gateway-error.js";
import { getAdminTokenPath, readAdminToken } from "../storage/data-dir/admin-token.js";
import { findDataDirHolder } from "../storage/data-dir/gateway-address.js";
import { redactUrl } from "../storage/redact-url.js";
import type { SharedState } from "../storage/store.js";
import { type AdminAlerts, createDirectAdminAlerts, createHttpAdminAlerts } from "./admin-alerts.js";
import { type AdminReports, createDirectAdminReports, createHttpAdminReports } from "./admin-reports.js";
import { createHttpAdminCaller, createHttpAdminClient } from "./http-admin-client.js";
import { sendHttpRequest } from "./send-http-request.js";

const PROBE_TIMEOUT_MS = 1_000;
/** The CLI admits no requests, so its guard's lease time is never used. */
const CLI_LEASE_TTL_MS = 120_000;

export interface AdminTransport {
  admin: AdminService;
  /** The admin API's read-only reports (spend, usage, requests). */
  reports: AdminReports;
  /** Budget-alert settings (thresholds, webhook). */
  alerts: AdminAlerts;
  /** "http": through a running gateway; "direct": the CLI opened the store. */
  kind: "http" | "direct";
  /** What the command acts on, said on stderr: the gateway's URL, or the database opened. */
  target: string;
  close(): Promise<void>;
}

export interface AdminTransportEnvironment {
  env: NodeJS.ProcessEnv;
  /** Where non-fatal notes go (stderr). */
  warn(message: string): void;
}

/**
 * Which gateway to ask, in order: GATEWAY_URL when it answers; embedded, the gateway holding the
 * data folder (at the address it wrote there, whatever its port); without GATEWAY_URL, the
 * default port. With none answering, the database itself, unless a running process holds the
 * embedded folder: then the CLI refuses with the fix instead of opening the folder beside it.
 */
export async function openAdminTransport({ env, warn }: AdminTransportEnvironment): Promise<AdminTransport> {
  const explicitUrl = env.GATEWAY_URL || undefined;
  const defaultUrl = `http://127.0.0.1:${env.PORT || 8080}`;
  const dataDir = resolve(env.GATEWAY_DATA_DIR || "./.data");
  const databaseUrl = env.DATABASE_URL || undefined;

  if (explicitUrl !== undefined && (await isGatewayRunning(explicitUrl))) {
    return openHttpTransport(env, dataDir, explicitUrl, `the gateway at ${explicitUrl} (GATEWAY_URL)`);
  }
  const holder = databaseUrl === undefined ? await findDataDirHolder(dataDir) : undefined;
  if (holder !== undefined) {
    if (holder.url !== undefined && (await isGatewayRunning(holder.url))) {
      return openHttpTransport(
        env,
        dataDir,
        holder.url,
        `the gateway at ${holder.url}, which holds ${dataDir}`,
      );
    }
    throw GatewayError.invalidRequest(
      `The data folder ${dataDir} is in use by process ${holder.pid}, and ${
        holder.url === undefined ? "it recorded no gateway address" : `no gateway answers at ${holder.url}`
      }${explicitUrl === undefined ? "" : ` or at ${explicitUrl} (GATEWAY_URL)`}. Opening the folder beside ` +
        "it would corrupt it. Set GATEWAY_URL to the running gateway's address (it uses the folder's " +
        "admin token), or stop that process and run the command again.",
    );
  }
  if (explicitUrl === undefined && (await isGatewayRunning(defaultUrl))) {
    return openHttpTransport(env, dataDir, defaultUrl, `the gateway at ${defaultUrl}`);
  }
  const nobody = `no gateway answered at ${explicitUrl ?? defaultUrl}`;
  return openDirectTransport(
    env,
    warn,
    dataDir,
    databaseUrl === undefined
      ? `${(await isExistingDatabase(dataDir)) ? "the" : "a new"} embedded database in ${dataDir} (${nobody})`
      : `PostgreSQL at ${redactUrl(databaseUrl)} (${nobody})`,
  );
}

async function openHttpTransport(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  gatewayUrl: string,
  target: string,
): Promise<AdminTransport> {
  const { token, source } = await readToken(env, dataDir);
  if (!token) {
    throw GatewayError.invalidRequest(
      `A gateway is running at ${gatewayUrl} but no admin token is available: set INTERNAL_SHARED_SECRET, ` +
        `or GATEWAY_DATA_DIR to the gateway's data folder (token file ${getAdminTokenPath(dataDir)}).`,
    );
  }
  const call = createHttpAdminCaller(gatewayUrl, token, source);
  return {
    admin: createHttpAdminClient(gatewayUrl, token, source),
    reports: createHttpAdminReports((path) => call("GET", path)),
    alerts: createHttpAdminAlerts(call),
    kind: "http",
    target,
    close: async () => {},
  };
}

async function openDirectTransport(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  dataDir: string,
  target: string,
): Promise<AdminTransport> {
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
    // The direct path reads no gateway config: the report names the key's own rate limit or none.
    reports: createDirectAdminReports(store, spendGuard, null),
    // The URL is checked as the gateway checks it (loopback only where tests allow it).
    alerts: createDirectAdminAlerts(store, {
      allowHttp: false,
      allowLoopback: env.ALERT_WEBHOOK_ALLOW_LOOPBACK?.trim().toLowerCase() === "true",
    }),
    kind: "direct",
    target,
    async close() {
      await Promise.allSettled([state.close(), spendGuard?.close(), store.close()]);
    },
  };
}

/** The embedded folder already holds a database (else opening it creates one). */
async function isExistingDatabase(dataDir: string): Promise<boolean> {
  return stat(join(dataDir, "pglite")).then(
    () => true,
    () => false,
  );
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
