/**
 * Servers a fault test owns and may break: its own redis-server on a spare loopback port (killed
 * and restarted by PID, never the shared one on 6379), an in-process TCP proxy in front of the
 * shared PostgreSQL that can cut every connection (the least invasive way to take "the database"
 * away from a gateway without touching the server other tests use), and gateway instances wired
 * to them. Everything listens on 127.0.0.1 only.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server, Socket } from "node:net";
import { Redis } from "ioredis";
import { buildConfig } from "../../src/config/load-config.js";
import type { Settings } from "../../src/config/settings.js";
import { type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { createTestConfigFile } from "./test-gateway.js";

/** A port the OS considers free right now (the caller binds it soon after). */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function isCommandAvailable(command: string): boolean {
  return spawnSync(command, ["--version"], { stdio: "ignore" }).status === 0;
}

export async function sleep(milliseconds: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Polls `probe` every `intervalMs` until it returns a value; throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached within ${options.timeoutMs ?? 10_000} ms`);
    await sleep(options.intervalMs ?? 50);
  }
}

export interface DisposableRedis {
  readonly url: string;
  readonly port: number;
  /** PID of the current redis-server process (changes on restart). */
  readonly pid: number | undefined;
  /** Sends a signal to our redis-server (by PID) and, for KILL/TERM, waits for it to exit. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** Starts a fresh, empty redis-server on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Our own redis-server (no persistence) on a spare loopback port. */
export async function startDisposableRedis(): Promise<DisposableRedis> {
  const port = await findFreePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const launch = async () => {
    const started = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
      ],
      { stdio: "ignore" },
    );
    child = started;
    await waitFor("redis-server answering PING", async () => ((await pingRedis(url)) ? true : undefined), {
      timeoutMs: 5_000,
    });
  };

  const exited = (process: ChildProcess) =>
    process.exitCode !== null || process.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => process.once("exit", () => resolve()));

  const signal = async (name: NodeJS.Signals) => {
    const current = child;
    if (!current?.pid) return;
    const done = exited(current);
    process.kill(current.pid, name);
    if (name === "SIGKILL" || name === "SIGTERM") await done;
  };

  await launch();
  return {
    url,
    port,
    get pid() {
      return child?.pid;
    },
    signal,
    restart: launch,
    async stop() {
      if (child && child.exitCode === null && child.signalCode === null) await signal("SIGKILL");
    },
  };
}

async function pingRedis(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export interface CuttableProxy {
  readonly port: number;
  /** Rewrites a postgres:// URL to go through the proxy. */
  route(url: string): string;
  /** Destroys every open connection and resets new ones until `restore()`: "the database is down". */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `targetPort`, cut and restored at will. */
export async function startCuttableProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    upstream.connect(targetPort, "127.0.0.1", () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    route(url) {
      const routed = new URL(url);
      routed.hostname = "127.0.0.1";
      routed.port = String(port);
      return routed.toString();
    },
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      cut = false;
    },
    async close() {
      cut = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface GatewayInstanceOptions
  extends Omit<GatewayOptions, "settings" | "config" | "logger">,
    Partial<
      Pick<Settings, "databaseUrl" | "redisUrl" | "dataDir" | "internalSharedSecret" | "instanceLimits">
    > {
  /** The fake upstream's base URL (`http://127.0.0.1:<port>/v1`). */
  upstreamBaseUrl: string;
  /** The config file (as an object); default: the test catalog routed to `upstreamBaseUrl`. */
  configFile?: Record<string, unknown>;
}

/** One gateway instance (in this process) on a port of its own, wired as the test says. */
export async function startGatewayInstance(options: GatewayInstanceOptions): Promise<RunningGateway> {
  const {
    upstreamBaseUrl,
    databaseUrl,
    redisUrl,
    dataDir,
    internalSharedSecret,
    instanceLimits,
    configFile,
    ...gatewayOptions
  } = options;
  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl,
    redisUrl,
    dataDir: dataDir ?? "memory://",
    configPath: "(test)",
    internalSharedSecret,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
    instanceLimits,
  };
  const config = buildConfig(configFile ?? createTestConfigFile(upstreamBaseUrl), {
    FAKE_UPSTREAM_KEY: "sk-upstream-secret",
  });
  return startGateway({
    settings,
    config,
    logger: createLogger(settings.logLevel),
    drainMs: 500,
    ...gatewayOptions,
  });
}

export function createStatePrefix(): string {
  return `test:${randomBytes(6).toString("hex")}:`;
}
