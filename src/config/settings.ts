/** Process settings from the environment (the config file holds the catalog and providers). */
import { resolve } from "node:path";

export interface Settings {
  port: number;
  host: string;
  databaseUrl?: string;
  redisUrl?: string;
  /**
   * REDIS_KEY_PREFIX: put before every Redis key and channel name, so that several gateways
   * (or a gateway and other software) can share one Redis without seeing each other's state.
   * Every instance of one gateway, and its admin CLI, must use the same prefix.
   */
  redisKeyPrefix?: string;
  dataDir: string;
  configPath: string;
  internalSharedSecret?: string;
  /**
   * TESTS ONLY (ALERT_WEBHOOK_ALLOW_LOOPBACK=true): budget-alert webhooks may go to loopback
   * addresses, over http, on any port. Private and link-local addresses stay refused.
   */
  alertWebhookAllowLoopback?: boolean;
  logLevel: string;
  /**
   * GATEWAY_PGLITE_THREAD: where embedded PGlite runs (storage/pglite/pglite-client.ts).
   * `readSettings` gives `auto` when the variable is unset; settings built in code without it get
   * `main` (gateway.ts), so the tests' gateways run PGlite on the request thread unless a test
   * asks for the worker.
   */
  pgliteThread?: PgliteThreadSetting;
  /**
   * GATEWAY_HEAP_GROWING_PERCENT: how far V8 lets the old generation grow past what the last full
   * collection kept before it collects again (main.ts; docs/performance.md, "Memory, distributed").
   * `readSettings` gives {@link DEFAULT_HEAP_GROWING_PERCENT} when unset; 0 leaves it to V8.
   */
  heapGrowingPercent?: number;
  /** Deadlines and caps of this instance (docs/operations.md); unset fields take the defaults. */
  instanceLimits?: Partial<InstanceLimits>;
  /** Where request spans are exported (OTLP over HTTP); absent: tracing is off. */
  tracing?: TracingSettings;
}

/** From the standard OpenTelemetry variables (docs/operations.md, "Traces"). */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  endpoint: string;
  /** `service.name` of the exported spans. */
  serviceName: string;
}

/** What one instance accepts and how long it waits (docs/operations.md states each one). */
export interface InstanceLimits {
  /** GATEWAY_HEADERS_TIMEOUT_MS: a request's headers must arrive within this. */
  headersTimeoutMs: number;
  /** GATEWAY_REQUEST_TIMEOUT_MS: the whole request (headers and body) must arrive within this. */
  requestTimeoutMs: number;
  /** GATEWAY_MAX_HEADER_BYTES: request line and headers together; larger → 431. */
  maxHeaderBytes: number;
  /**
   * GATEWAY_MAX_CONNECTIONS: open client connections; at the cap a new one takes the place of the
   * connection idle the longest, and is closed only when every connection is busy.
   */
  maxConnections: number;
  /** GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: the same cap per client address; 0 turns it off. */
  maxConnectionsPerAddress: number;
  /** GATEWAY_NEW_CONNECTION_TIMEOUT_MS: a new connection's first request head must arrive within this. */
  newConnectionTimeoutMs: number;
  /** GATEWAY_MAX_REQUESTS_IN_FLIGHT: requests being served; further ones get 429 at once. */
  maxRequestsInFlight: number;
  /** GATEWAY_DRAIN_TIMEOUT_MS: how long requests in flight may finish after SIGTERM/SIGINT. */
  drainTimeoutMs: number;
  /** GATEWAY_EVENT_LOOP_STALL_MS: event-loop stalls longer than this are logged; 0 turns it off. */
  eventLoopStallMs: number;
  /** GATEWAY_DATABASE_DEADLINE_MS: a database call on the request path is given up after this. */
  databaseDeadlineMs: number;
}

export const DEFAULT_INSTANCE_LIMITS: Readonly<InstanceLimits> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  maxHeaderBytes: 16_384,
  maxConnections: 4_096,
  maxConnectionsPerAddress: 0,
  newConnectionTimeoutMs: 5_000,
  maxRequestsInFlight: 1_000,
  drainTimeoutMs: 25_000,
  eventLoopStallMs: 200,
  databaseDeadlineMs: 2_000,
};

/** The environment variable of each limit, and the least value it accepts. */
const INSTANCE_LIMIT_VARIABLES: Record<keyof InstanceLimits, { name: string; min: number }> = {
  headersTimeoutMs: { name: "GATEWAY_HEADERS_TIMEOUT_MS", min: 100 },
  requestTimeoutMs: { name: "GATEWAY_REQUEST_TIMEOUT_MS", min: 100 },
  maxHeaderBytes: { name: "GATEWAY_MAX_HEADER_BYTES", min: 1_024 },
  maxConnections: { name: "GATEWAY_MAX_CONNECTIONS", min: 1 },
  maxConnectionsPerAddress: { name: "GATEWAY_MAX_CONNECTIONS_PER_ADDRESS", min: 0 },
  newConnectionTimeoutMs: { name: "GATEWAY_NEW_CONNECTION_TIMEOUT_MS", min: 100 },
  maxRequestsInFlight: { name: "GATEWAY_MAX_REQUESTS_IN_FLIGHT", min: 1 },
  drainTimeoutMs: { name: "GATEWAY_DRAIN_TIMEOUT_MS", min: 0 },
  eventLoopStallMs: { name: "GATEWAY_EVENT_LOOP_STALL_MS", min: 0 },
  databaseDeadlineMs: { name: "GATEWAY_DATABASE_DEADLINE_MS", min: 100 },
};

/** The settings' limits with the defaults filled in. */
export function resolveInstanceLimits(settings: Pick<Settings, "instanceLimits">): InstanceLimits {
  return Object.assign({}, DEFAULT_INSTANCE_LIMITS, settings.instanceLimits);
}

/** GATEWAY_PGLITE_THREAD: `auto` picks the worker thread when the process may use more than one CPU. */
export const PGLITE_THREAD_SETTINGS = ["auto", "main", "worker"] as const;
export type PgliteThreadSetting = (typeof PGLITE_THREAD_SETTINGS)[number];

/** 2× the live old generation; V8's own factor reaches 4× (docs/performance.md, "Memory, distributed"). */
export const DEFAULT_HEAP_GROWING_PERCENT = 100;

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
    redisKeyPrefix: env.REDIS_KEY_PREFIX || undefined,
    dataDir: resolve(env.GATEWAY_DATA_DIR || "./.data"),
    configPath: resolve(env.GATEWAY_CONFIG || DEFAULT_CONFIG_PATH),
    internalSharedSecret: env.INTERNAL_SHARED_SECRET || undefined,
    alertWebhookAllowLoopback: env.ALERT_WEBHOOK_ALLOW_LOOPBACK?.trim().toLowerCase() === "true",
    logLevel: env.LOG_LEVEL || "info",
    pgliteThread: readPgliteThread(env.GATEWAY_PGLITE_THREAD),
    heapGrowingPercent: readHeapGrowingPercent(env.GATEWAY_HEAP_GROWING_PERCENT),
    instanceLimits: readInstanceLimits(env),
    tracing: readTracingSettings(env),
  };
}

/**
 * Tracing is on when an OTLP endpoint is set: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is the traces
 * URL as is, `OTEL_EXPORTER_OTLP_ENDPOINT` the base the traces path is appended to (the standard
 * rule). `OTEL_SDK_DISABLED=true` turns it off whatever is set.
 */
export function readTracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const baseUrl = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const name = tracesUrl ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const endpoint = tracesUrl || (baseUrl ? `${baseUrl.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (endpoint === undefined) return undefined;
  // The value is not echoed: an endpoint URL may carry credentials.
  if (!isHttpUrl(endpoint)) throw new Error(`${name} must be an http(s) URL`);
  return { endpoint, serviceName: env.OTEL_SERVICE_NAME?.trim() || "hi-gateway" };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

function readInstanceLimits(env: NodeJS.ProcessEnv): InstanceLimits {
  const limits = { ...DEFAULT_INSTANCE_LIMITS };
  for (const field of Object.keys(INSTANCE_LIMIT_VARIABLES) as Array<keyof InstanceLimits>) {
    const { name, min } = INSTANCE_LIMIT_VARIABLES[field];
    const text = env[name];
    if (text === undefined || text === "") continue;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) {
      throw new Error(`${name} must be an integer of at least ${min}, got "${text}"`);
    }
    limits[field] = value;
  }
  return limits;
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

function readHeapGrowingPercent(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_HEAP_GROWING_PERCENT;
  const percent = Number(value);
  if (!Number.isSafeInteger(percent) || percent < 0 || percent > 1_000) {
    throw new Error(`GATEWAY_HEAP_GROWING_PERCENT must be an integer 0..1000, got "${value}"`);
  }
  return percent;
}
