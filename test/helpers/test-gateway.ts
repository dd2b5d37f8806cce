/**
 * Starts a real gateway (HTTP on 127.0.0.1, port chosen by the OS) in one of the two runtime modes,
 * with a catalog whose models route to a fake OpenAI-compatible upstream on loopback.
 * `embedded`: in-memory PGlite + in-process state. `distributed`: a fresh PostgreSQL database +
 * Redis with a random key prefix. Everything is torn down by `close()`.
 */
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import OpenAI from "openai";
import type { AdminService } from "../../src/admin/admin-service.js";
import { buildConfig } from "../../src/config/load-config.js";
import type { Settings, TracingSettings } from "../../src/config/settings.js";
import { type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { type FakeOpenAiUpstream, startFakeOpenAiUpstream } from "./fake-openai-upstream.js";
import { createTestDatabase, requireMode, TEST_REDIS_URL } from "./storage-modes.js";

export type GatewayMode = "embedded" | "distributed";
export const GATEWAY_MODES: readonly GatewayMode[] = ["embedded", "distributed"];

/** Catalog of the test gateway: $2/M prompt, $8/M completion, $0.50/M cached prompt. */
export const TEST_MODEL = "test/chat-model";
export const OTHER_MODEL = "test/other-model";
export const TEST_PRICES = { prompt: "2", completion: "8", cached_prompt: "0.5" };

export function createTestConfigFile(upstreamBaseUrl: string, overrides: Record<string, unknown> = {}) {
  const model = (slug: string, upstreamModel: string) => ({
    slug,
    name: slug,
    provider: { slug: "test", name: "Test" },
    description: "A model served by the fake upstream",
    release_date: "2026-01-01",
    context_length: 128_000,
    max_output_tokens: 4096,
    pricing: TEST_PRICES,
    features: ["tools", "streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider: "fake", model: upstreamModel }],
  });
  return {
    providers: [
      {
        id: "fake",
        kind: "openai-compatible",
        base_url: upstreamBaseUrl,
        api_key_env: "FAKE_UPSTREAM_KEY",
        timeouts: { connect_ms: 2000, first_byte_ms: 5000, response_ms: 5000, idle_ms: 5000 },
      },
    ],
    models: [model(TEST_MODEL, "fake-upstream-model"), model(OTHER_MODEL, "fake-other-model")],
    ...overrides,
  };
}

export interface TestGateway {
  mode: GatewayMode;
  gateway: RunningGateway;
  upstream: FakeOpenAiUpstream;
  admin: AdminService;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A workspace with $10 and an active key for it. */
  workspaceId: string;
  apiKey: string;
  keyId: string;
  /** The `X-Internal-Token` of the gateway's admin API. */
  internalSecret: string;
  /** An official OpenAI client for `apiKey` (no retries, so errors surface as they are). */
  openai: OpenAI;
  createClient(apiKey: string): OpenAI;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Replaces top-level config sections; a function gets the fake upstream's base URL first. */
  configOverrides?: Record<string, unknown> | ((upstreamBaseUrl: string) => Record<string, unknown>);
  keepAliveMs?: number;
  /** How long `close()` waits for requests in flight before it ends them (default 500 ms). */
  drainMs?: number;
  credits?: string;
  /** Where the gateway's log goes (default: pino's stdout), and its level (default: TEST_LOG_LEVEL or silent). */
  logDestination?: NodeJS.WritableStream;
  logLevel?: string;
  /** Where request spans go (default: tracing off). */
  tracing?: TracingSettings;
  /** Server tools' clock and web_fetch's network (a tripwire network proves refusals). */
  serverTools?: GatewayOptions["serverTools"];
  /** Budget-alert webhooks may go to a loopback receiver (ALERT_WEBHOOK_ALLOW_LOOPBACK). */
  alertWebhookAllowLoopback?: boolean;
}

export async function startTestGateway(
  mode: GatewayMode,
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const upstream = await startFakeOpenAiUpstream();
  const database = mode === "distributed" ? await createTestDatabase() : undefined;
  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: database?.url,
    redisUrl: mode === "distributed" ? TEST_REDIS_URL : undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: "(test)",
    internalSharedSecret: `test-secret-${randomBytes(8).toString("hex")}`,
    logLevel: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? "silent",
    tracing: options.tracing,
    alertWebhookAllowLoopback: options.alertWebhookAllowLoopback,
  };
  const overrides =
    typeof options.configOverrides === "function"
      ? options.configOverrides(upstream.baseUrl)
      : options.configOverrides;
  const config = buildConfig(createTestConfigFile(upstream.baseUrl, overrides), {
    FAKE_UPSTREAM_KEY: "sk-upstream-secret",
  });
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      settings,
      config,
      logger: createLogger(settings.logLevel, options.logDestination),
      keepAliveMs: options.keepAliveMs,
      drainMs: options.drainMs ?? 500,
      statePrefix: `test:${randomBytes(6).toString("hex")}:`,
      serverTools: options.serverTools,
    });
  } catch (error) {
    await upstream.close();
    await database?.drop();
    throw error;
  }
  // The gateway's own admin service: like its admin API, it applies a key change to this
  // instance's next request at once instead of after the Redis announcement comes back.
  const admin = gateway.admin;
  const workspace = await admin.createWorkspace({ name: "e2e", creditsUsd: options.credits ?? "10" });
  const { key, secret } = await admin.createKey({ workspaceId: workspace.id, name: "e2e" });
  const createClient = (apiKey: string) =>
    new OpenAI({ apiKey, baseURL: `${gateway.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
  return {
    mode,
    gateway,
    upstream,
    admin,
    url: gateway.url,
    workspaceId: workspace.id,
    apiKey: secret,
    keyId: key.id,
    internalSecret: settings.internalSharedSecret ?? "",
    openai: createClient(secret),
    createClient,
    async close() {
      await gateway.close();
      await upstream.close();
      await database?.drop();
    },
  };
}

/**
 * Registers `title [embedded]` and `title [distributed]`; the distributed variant skips (or fails
 * under CI=true) when PostgreSQL or Redis is unreachable.
 */
export function forEachGatewayMode(
  title: string,
  fn: (context: TestGateway, t: TestContext) => Promise<void>,
  options: TestGatewayOptions = {},
): void {
  for (const mode of GATEWAY_MODES) {
    test(`${title} [${mode}]`, async (t) => {
      if (mode === "distributed") {
        if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
      }
      const context = await startTestGateway(mode, options);
      try {
        await fn(context, t);
      } finally {
        await context.close();
      }
    });
  }
}
