/**
 * Builds and runs one gateway instance: storage, shared state, engine, HTTP server, graceful
 * shutdown. `main.ts` calls it with the process settings; tests call it with their own.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createAdminService } from "./admin/admin-service.js";
import { writeAdminToken } from "./admin/admin-token.js";
import { createAuthenticator } from "./auth/authenticate.js";
import { loadConfigFile } from "./config/load-config.js";
import type { Settings } from "./config/settings.js";
import type { GatewayConfig, ProviderKind } from "./config/types.js";
import { bootstrapEmbeddedWorkspace } from "./engine/bootstrap.js";
import { GenerationEngine } from "./engine/generation-engine.js";
import { createApp } from "./http/create-app.js";
import { createLogger, type Logger } from "./logging/logger.js";
import { createAnthropicAdapter } from "./providers/anthropic/adapter.js";
import { createGoogleAdapter } from "./providers/google/adapter.js";
import { createOpenAiCompatibleAdapter } from "./providers/openai-compatible/adapter.js";
import { createOpenAiChatAdapter } from "./providers/openai-compatible/openai-chat-adapter.js";
import { createOpenAiResponsesAdapter } from "./providers/openai-responses/adapter.js";
import type { ProviderAdapter } from "./providers/provider-adapter.js";
import { openStore } from "./storage/open-store.js";
import { openSharedState } from "./storage/shared-state.js";
import type { SharedState, Store } from "./storage/types.js";

export interface GatewayOptions {
  settings: Settings;
  /** A ready config (tests); default: the file at settings.configPath. */
  config?: GatewayConfig;
  logger?: Logger;
  /** Print the first-start key and curl example (the CLI start does; tests don't). */
  announce?: (text: string) => void;
  keepAliveMs?: number;
  /** Grace period for in-flight requests on shutdown. */
  drainMs?: number;
  /** Prefix of every Redis key and channel (tests isolate themselves with it). */
  statePrefix?: string;
}

export interface RunningGateway {
  url: string;
  port: number;
  store: Store;
  state: SharedState;
  config: GatewayConfig;
  internalSecret: string;
  close(): Promise<void>;
}

export function createAdapters(): Map<ProviderKind, ProviderAdapter> {
  return new Map<ProviderKind, ProviderAdapter>([
    ["openai-compatible", createOpenAiCompatibleAdapter()],
    ["anthropic", createAnthropicAdapter()],
    ["google", createGoogleAdapter()],
    ["openai-chat", createOpenAiChatAdapter()],
    ["openai-responses", createOpenAiResponsesAdapter()],
  ]);
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { settings } = options;
  const logger = options.logger ?? createLogger(settings.logLevel);
  const config = options.config ?? loadConfigFile(settings.configPath);
  const store = await openStore({ databaseUrl: settings.databaseUrl, dataDir: settings.dataDir });
  const state = await openSharedState({
    redisUrl: settings.redisUrl,
    prefix: options.statePrefix,
    onError: (error) => logger.warn({ err: error }, "redis connection error"),
  });

  const internalSecret =
    settings.internalSharedSecret ??
    (store.mode === "embedded" ? await writeAdminToken(settings.dataDir) : randomSecretNobodyKnows());

  if (store.mode === "embedded") {
    const created = await bootstrapEmbeddedWorkspace(store, config);
    if (created && options.announce) options.announce(created);
  }

  const authenticator = await createAuthenticator(store, state);
  const admin = createAdminService({ store, state });
  const engine = new GenerationEngine({ config, store, adapters: createAdapters(), logger });
  let draining = false;
  const app = createApp({
    config,
    store,
    state,
    authenticator,
    engine,
    admin,
    internalSecret,
    logger,
    isDraining: () => draining,
    keepAliveMs: options.keepAliveMs,
  });

  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const instance = serve({ fetch: app.fetch, port: settings.port, hostname: settings.host }, () =>
      resolve(instance),
    );
    instance.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${settings.host.includes(":") ? `[${settings.host}]` : settings.host}:${port}`;
  logger.info(
    { url, database: store.mode, state: state.mode, models: config.models.length },
    "gateway listening",
  );

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    store,
    state,
    config,
    internalSecret,
    close() {
      closing ??= (async () => {
        draining = true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            // In-flight streams past the grace period are cut; their usage settles on cancel.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            resolve();
          }, options.drainMs ?? 10_000);
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        });
        await authenticator.close();
        await state.close();
        await store.close();
      })();
      return closing;
    },
  };
}

function randomSecretNobodyKnows(): string {
  // Distributed mode without INTERNAL_SHARED_SECRET: the admin HTTP API stays closed; the CLI
  // talks to Postgres directly instead.
  return crypto.randomUUID() + crypto.randomUUID();
}
