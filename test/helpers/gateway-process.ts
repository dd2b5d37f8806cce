/**
 * Real gateway processes for multi-instance tests: `node --import tsx src/main.ts` as a child
 * process with its own environment, ready once it prints its listening line, stopped by its PID
 * (SIGTERM, then SIGKILL after a grace period). Only processes started here are ever signalled.
 *
 * `startGatewayCluster` runs N of them on one fresh PostgreSQL database and one Redis, with a
 * temporary config file routing to the given upstream, and an admin client for setup.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import type { AdminService } from "../../src/admin/admin-service.js";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import {
  createTempDir,
  createTestDatabase,
  deleteRedisKeys,
  TEST_REDIS_URL,
  type TestDatabase,
} from "./storage-modes.js";

const PROJECT_ROOT = new URL("../../", import.meta.url).pathname;
const READY_PATTERN = /Gateway listening on (http:\/\/\S+) /;
/** Variables of the test runner's own environment that must not leak into a child gateway. */
const INHERITED_SETTINGS = [
  "DATABASE_URL",
  "REDIS_URL",
  "REDIS_KEY_PREFIX",
  "PORT",
  "HOST",
  "GATEWAY_CONFIG",
  "GATEWAY_DATA_DIR",
  "INTERNAL_SHARED_SECRET",
  "LOG_LEVEL",
];

export interface GatewayProcess {
  url: string;
  pid: number;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /**
   * Resolves with the output once it matches; rejects after `timeoutMs`. The ready line comes on
   * stdout and the logger writes to stderr: two pipes, so a log line written before the ready
   * line may still be on its way when the process counts as ready.
   */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM to this PID, SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<string>;
}

export async function startGatewayProcess(options: {
  env: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<GatewayProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_SETTINGS) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: PROJECT_ROOT,
    env: { ...env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => resolve(`code=${code} signal=${signal}`)),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error("the gateway process did not start");

  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`gateway ${pid} not ready within ${options.readyTimeoutMs ?? 45_000} ms:\n${output}`),
          ),
        options.readyTimeoutMs ?? 45_000,
      );
      const check = () => {
        const match = READY_PATTERN.exec(output);
        if (!match) return;
        clearTimeout(timer);
        resolve(match[1]);
      };
      child.stdout!.on("data", check);
      void exited.then((how) => {
        clearTimeout(timer);
        reject(new Error(`gateway ${pid} exited (${how}) before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    await stopChild(child, pid, exited, 2_000);
    throw error;
  }
  return {
    url,
    pid,
    output: () => output,
    async waitForOutput(pattern, timeoutMs = 5_000) {
      for (const deadline = Date.now() + timeoutMs; !pattern.test(output); ) {
        if (Date.now() > deadline)
          throw new Error(`gateway ${pid}: no ${pattern} within ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return output;
    },
    stop: (graceMs = 10_000) => stopChild(child, pid, exited, graceMs),
  };
}

async function stopChild(
  child: ChildProcess,
  pid: number,
  exited: Promise<string>,
  graceMs: number,
): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  signal(pid, "SIGTERM");
  const timer = setTimeout(() => signal(pid, "SIGKILL"), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

export interface EmbeddedGatewaySetup {
  /** The environment of a gateway process on the folder (pass to startGatewayProcess). */
  env: Record<string, string>;
  dataDir: string;
  /** INTERNAL_SHARED_SECRET: the admin API's token. */
  secret: string;
  cleanup(): Promise<void>;
}

/**
 * A temporary folder holding `config` (as YAML) and a data folder, and the environment of an
 * embedded gateway process on them; a second process started with the same `env` is a restart.
 */
export async function prepareEmbeddedGateway(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<EmbeddedGatewaySetup> {
  const folder = await createTempDir("gw-embedded-");
  const configPath = join(folder.path, "gateway.yaml");
  await writeFile(configPath, stringify(config));
  const secret = `test-secret-${randomBytes(8).toString("hex")}`;
  const dataDir = join(folder.path, "data");
  return {
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: dataDir,
      INTERNAL_SHARED_SECRET: secret,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      ...env,
    },
    dataDir,
    secret,
    cleanup: () => folder.cleanup(),
  };
}

export interface GatewayCluster {
  gateways: GatewayProcess[];
  databaseUrl: string;
  /** REDIS_KEY_PREFIX of the cluster: its Redis keys are its own, and deleted by `stop`. */
  redisPrefix: string;
  /** The admin API of the first gateway. */
  admin: AdminService;
  stop(): Promise<void>;
}

/**
 * N gateways on one fresh database and the shared Redis. `config` is the YAML config (as an
 * object); `env` adds variables (e.g. the upstream key the config names).
 */
export async function startGatewayCluster(options: {
  count: number;
  config: Record<string, unknown>;
  env?: Record<string, string>;
}): Promise<GatewayCluster> {
  const folder = await createTempDir("gw-cluster-");
  let database: TestDatabase | undefined;
  const gateways: GatewayProcess[] = [];
  // Clusters of tests that run at the same time share one Redis: a prefix keeps one cluster's sweep
  // from finding another's in-progress records, and its counters from meeting another's.
  const redisPrefix = `cluster_${randomBytes(6).toString("hex")}:`;
  const stop = async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await database?.drop();
    await folder.cleanup();
    await deleteRedisKeys(redisPrefix).catch(() => {});
  };
  try {
    database = await createTestDatabase();
    const configPath = join(folder.path, "gateway.yaml");
    await writeFile(configPath, stringify(options.config));
    const secret = `test-secret-${randomBytes(8).toString("hex")}`;
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: join(folder.path, "data"),
      INTERNAL_SHARED_SECRET: secret,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      ...options.env,
    };
    // One after the other would double the start-up time; the migrator's lock serialises them.
    const started = await Promise.allSettled(
      Array.from({ length: options.count }, (_, index) =>
        startGatewayProcess({ env: { ...env, GATEWAY_DATA_DIR: `${env.GATEWAY_DATA_DIR}-${index}` } }),
      ),
    );
    for (const result of started) if (result.status === "fulfilled") gateways.push(result.value);
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return {
      gateways,
      databaseUrl: database.url,
      redisPrefix,
      admin: createHttpAdminClient(gateways[0].url, secret),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
