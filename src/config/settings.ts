/** Process settings from the environment (the config file holds the catalog and providers). */
import { resolve } from "node:path";
import { PGLITE_THREAD_SETTINGS, type PgliteThreadSetting } from "../storage/sql-client.js";

export interface Settings {
  port: number;
  host: string;
  databaseUrl?: string;
  redisUrl?: string;
  dataDir: string;
  configPath: string;
  internalSharedSecret?: string;
  logLevel: string;
  /**
   * GATEWAY_PGLITE_THREAD: where embedded PGlite runs (storage/sql-client.ts). `readSettings` gives
   * `auto` when the variable is unset; settings built in code without it get `main` (gateway.ts),
   * so the tests' gateways run PGlite on the request thread unless a test asks for the worker.
   */
  pgliteThread?: PgliteThreadSetting;
}

export const DEFAULT_CONFIG_PATH = new URL("../../config/gateway.yaml", import.meta.url).pathname;

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer 0..65535, got "${env.PORT}"`);
  }
  return {
    port,
    host: env.HOST || "127.0.0.1",
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    dataDir: resolve(env.GATEWAY_DATA_DIR || "./.data"),
    configPath: resolve(env.GATEWAY_CONFIG || DEFAULT_CONFIG_PATH),
    internalSharedSecret: env.INTERNAL_SHARED_SECRET || undefined,
    logLevel: env.LOG_LEVEL || "info",
    pgliteThread: readPgliteThread(env.GATEWAY_PGLITE_THREAD),
  };
}

function readPgliteThread(value: string | undefined): PgliteThreadSetting {
  if (!value) return "auto";
  const setting = PGLITE_THREAD_SETTINGS.find((candidate) => candidate === value);
  if (!setting)
    throw new Error(
      `GATEWAY_PGLITE_THREAD must be one of ${PGLITE_THREAD_SETTINGS.join(", ")}, got "${value}"`,
    );
  return setting;
}
