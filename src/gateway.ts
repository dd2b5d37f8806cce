/**
 * Builds and runs one gateway instance: storage, shared state, engine, HTTP server, graceful
 * shutdown. `main.ts` calls it with the process settings; tests call it with their own.
 */

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AdminService, createAdminService } from "./admin/admin-service.js";
import { bootstrapEmbeddedWorkspace, describeStart } from "./admin/bootstrap.js";
import { createBudgetAlerts } from "./alerts/budget-alerts.js";
import { createAuthenticator } from "./auth/authenticate.js";
import { evictBeforePublish } from "./auth/evict-before-publish.js";
import { DEFAULT_PLAYGROUND_KEY_POLICY, type PlaygroundKeyPolicy } from "./auth/playground-key-policy.js";
import { startPlaygroundKeyPurge } from "./auth/playground-key-purge.js";
import type { ConfiguredProviderKind } from "./catalog/types.js";
import type { GatewayConfig } from "./config/gateway-config.js";
import { loadConfigFile } from "./config/load-config.js";
import { resolveInstanceLimits, type Settings } from "./config/settings.js";
import { startBreakerReporter } from "./engine/breaker-reports.js";
import { startDeadInstanceSweep } from "./engine/dead-instance-sweep.js";
import { GenerationEngine } from "./engine/generation-engine.js";
import { settleInterrupted, startInterruptedSweep } from "./engine/interrupted-sweep.js";
import { KEEP_ALIVE_INTERVAL_MS } from "./http/generation/sse-response.js";
import { createResponsesSockets } from "./http/responses-socket/responses-socket-server.js";
import { WebSocketAwareIncomingMessage } from "./http/responses-socket/websocket-aware-incoming-message.js";
import { manageConnectionRoom } from "./http/router/connection-room.js";
import { createApp } from "./http/router/create-app.js";
import { drainInstance } from "./http/router/drain-instance.js";
import { readHeldAnswerBytes, setHeldAnswersBudget } from "./http/router/held-answers.js";
import { createInFlightRequests } from "./http/router/in-flight-requests.js";
import { createRequestListener } from "./http/router/request-listener.js";
import { RESPONSE_HIGH_WATER_BYTES } from "./http/router/response-high-water.js";
import { createResponsesFormat } from "./ingress/responses/index.js";
import { createItemSeal, deriveItemSealKey } from "./ingress/responses/item-seal.js";
import { createDryRunGuard } from "./limits/dry-run-guard.js";
import type { SpendGuard } from "./limits/spend-guard.js";
import { startEventLoopWatchdog } from "./logging/event-loop-watchdog.js";
import { createLogger, type Logger } from "./logging/logger.js";
import { loadO200kCounter } from "./metering/count-o200k-tokens.js";
import { GatewayMetrics, loadRequestTracer } from "./observability/index.js";
import { createAnthropicAdapter } from "./providers/anthropic/adapter.js";
import { createDemoAdapter } from "./providers/demo/demo-adapter.js";
import { createGoogleAdapter } from "./providers/google/adapter.js";
import { createOpenAiCompatibleAdapter } from "./providers/openai-compatible/adapter.js";
import { createOpenAiChatAdapter } from "./providers/openai-compatible/openai-chat-adapter.js";
import { createOpenAiResponsesAdapter } from "./providers/openai-responses/adapter.js";
import type { ProviderAdapter } from "./providers/provider-adapter.js";
import { createResponseCache } from "./response-cache/response-cache.js";
import type { PdfExtractorStats } from "./server-tools/pdf/index.js";
import { createServerTools, type ServerToolsOptions } from "./server-tools/toolbox/index.js";
import {
  type HtmlConverterStats,
  toWebFetchSettings,
  warnIfWebFetchUnsafe,
} from "./server-tools/web-fetch/index.js";
import { writeAdminToken } from "./storage/data-dir/admin-token.js";
import { removeGatewayUrl, writeGatewayUrl } from "./storage/data-dir/gateway-address.js";
import { readItemSealSecret } from "./storage/data-dir/item-seal-secret.js";
import { openSpendGuard } from "./storage/open-spend-guard.js";
import {
  IN_MEMORY_DATA_DIR,
  openStore,
  openUsageRecorder,
  type UsageRecorderOptions,
} from "./storage/open-store.js";
import { resolvePgliteThread } from "./storage/pglite/pglite-client.js";
import { openResponseCacheStore } from "./storage/response-cache/open-response-cache-store.js";
import { createBreakerReportStore } from "./storage/shared-state/breaker-report-store.js";
import { createInstanceLeases } from "./storage/shared-state/instance-leases.js";
import { openSharedState } from "./storage/shared-state/shared-state.js";
import type { SharedState, Store } from "./storage/store.js";
import type { OutboxEvent, ReplayResult } from "./storage/usage-records/distributed-recorder.js";

export interface GatewayOptions {
  settings: Settings;
  /** A ready config (tests); default: the file at settings.configPath. */
  config?: GatewayConfig;
  logger?: Logger;
  /**
   * Receives the start text: the first start's key and curl example, providers without an API key,
   * how to mint a key (the CLI start prints it; tests don't). `HOST_PORT` stands for the address.
   */
  announce?: (text: string) => void;
  keepAliveMs?: number;
  /** Overrides `settings.instanceLimits.drainTimeoutMs` (tests stop their gateways quickly). */
  drainMs?: number;
  /** Prefix of every Redis key and channel; overrides REDIS_KEY_PREFIX (tests isolate themselves with it). */
  statePrefix?: string;
  /** Auth cache TTL (default 5 s, at most 30 s): how long a missed key-change message can matter. */
  authCacheTtlMs?: number;
  /** Overrides of the playground-key rules (tests shorten the TTL). */
  playgroundKeyPolicy?: Partial<PlaygroundKeyPolicy>;
  /** Deadlines and retry pacing of the usage outbox (tests speed them up). */
  outbox?: UsageRecorderOptions["outbox"];
  /** Server tools' clock and web_fetch's network (tests); default: the system's. */
  serverTools?: Pick<ServerToolsOptions, "now" | "fetchNetwork">;
}

export interface RunningGateway {
  url: string;
  port: number;
  store: Store;
  state: SharedState;
  config: GatewayConfig;
  internalSecret: string;
  /** Spend and rate limits (Redis, or in-process in embedded mode). */
  spendGuard: SpendGuard;
  /**
   * The admin service behind this instance's admin API: a change made through it applies to this
   * instance's next request at once (evictBeforePublish), others' after the announcement arrives.
   */
  admin: AdminService;
  /** One pass of the usage-outbox replayer now (it also runs by itself). */
  replayParkedOutcomes(): Promise<ReplayResult>;
  /** One playground-key purge now (it also runs by itself). */
  purgeExpiredPlaygroundKeys(): Promise<number>;
  /** One sweep of requests interrupted by a crashed instance now (it also runs by itself). */
  sweepInterrupted(): Promise<number>;
  /** The PDF reader's counters (parses, cache hits); undefined without server tools. */
  pdfStats(): PdfExtractorStats | undefined;
  /** web_fetch's HTML conversion pool (workers, jobs, workers terminated); undefined without server tools. */
  htmlConversionStats(): HtmlConverterStats | undefined;
  close(): Promise<void>;
}

export function createAdapters(): Map<ConfiguredProviderKind, ProviderAdapter> {
  return new Map<ConfiguredProviderKind, ProviderAdapter>([
    ["openai-compatible", createOpenAiCompatibleAdapter()],
    ["anthropic", createAnthropicAdapter()],
    ["google", createGoogleAdapter()],
    ["openai-chat", createOpenAiChatAdapter()],
    ["openai-responses", createOpenAiResponsesAdapter()],
    ["demo", createDemoAdapter()],
  ]);
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { settings } = options;
  const limits = resolveInstanceLimits(settings);
  const logger = options.logger ?? createLogger(settings.logLevel);
  const config = options.config ?? loadConfigFile(settings.configPath);
  // Answers waiting for clients that do not read share one budget per process (held-answers.ts).
  setHeldAnswersBudget(config.heldAnswersBytes);
  const pgliteThread = resolvePgliteThread(settings.pgliteThread ?? "main");
  // Token counts (reservations on o200k routes, count_tokens, estimates) need the rank table:
  // built before the first request rather than during it.
  loadO200kCounter();
  const rawStore = await openStore({
    databaseUrl: settings.databaseUrl,
    dataDir: settings.dataDir,
    pgliteThread,
    deadlineMs: limits.databaseDeadlineMs,
    openWhileUnreachable: true,
    // With Redis the usage recorder keeps each record's copy there (openUsageRecorder below).
    recordCopiesInRedis: Boolean(settings.redisUrl),
    onError: (error) => logger.warn({ err: error }, "database connection error"),
    onJournalError: (error, requestId) =>
      logger.error(
        { err: error, requestId },
        "usage journal append failed; the record waits in memory for its database batch",
      ),
    onAvailabilityChange: (available, cause) => {
      if (available) logger.info("database reachable again");
      else
        logger.warn({ err: cause }, "database unreachable; requests that need it get 429 until it answers");
    },
  });
  const statePrefix = options.statePrefix ?? settings.redisKeyPrefix;
  const state = await openSharedState({
    redisUrl: settings.redisUrl,
    prefix: statePrefix,
    onError: (error) => logger.warn({ err: error }, "redis connection error"),
  });
  // The usage recorder of the store's mode (docs/durability.md). PostgreSQL: records that cannot
  // reach the database are parked in <dataDir>/outbox and replayed (its first pass is the start-up
  // replay), and with Redis in-progress records are shared through it. Embedded: the journal was
  // replayed when the store opened.
  const generations = await openUsageRecorder(rawStore, {
    dataDir: settings.dataDir,
    state,
    onOutboxEvent: (event) => logOutboxEvent(logger, event),
    onSharedError: (error, what, requestId) => logger.warn({ err: error, requestId }, what),
    outbox: options.outbox,
  });
  const store: Store = { ...rawStore };
  store.generations = generations;
  // Budget alerts look at a key's spend after each settlement, off the request path (alerts/).
  const budgetAlerts = createBudgetAlerts({
    alerts: store.alerts,
    keyLimits: store.keyLimits,
    policy: { allowHttp: false, allowLoopback: settings.alertWebhookAllowLoopback === true },
    logger,
  });
  const spendGuard = await openSpendGuard({
    keyLimits: store.keyLimits,
    redisUrl: settings.redisUrl,
    prefix: statePrefix,
    leaseTtlMs: config.reservationTtlMs,
    // Every request ends by max_request_seconds; its lease must not stop being refreshed before.
    maxLeaseLifetimeMs: config.maxRequestMs + config.reservationTtlMs,
    recoveryMs: config.limitStoreRecoveryMs,
    logger,
    state,
    onSettled: (input, admittedAt, costMicroUsd) =>
      budgetAlerts.onSettled({
        keyId: input.keyId,
        workspaceId: input.workspaceId,
        limits: input.limits,
        admittedAt,
        costMicroUsd,
      }),
  });

  // Requests a crashed instance left in progress (docs/durability.md). Embedded, the previous
  // process owned the data folder alone, so everything still in progress died with it: settled
  // before serving, so the counters seeded next already see it. Every instance also sweeps by age.
  // Its journal was replayed when the store opened: a journaled final record is not an interrupted
  // request.
  const sweepDeps = { config, store, spendGuard, logger };
  if (store.mode === "embedded") {
    await settleInterrupted(sweepDeps, new Date(Date.now() + ONE_DAY_MS));
  }
  const sweep = startInterruptedSweep(sweepDeps);
  // Distributed: a lease per instance in Redis; the records of one whose lease expired are settled
  // within about limits.instance_lease_seconds, whatever max_request_seconds is.
  const instanceId = `inst_${randomBytes(9).toString("base64url")}`;
  const deadInstances =
    store.generations.listInProgressOf === undefined
      ? undefined
      : startDeadInstanceSweep({ instanceId, leases: createInstanceLeases(state), ...sweepDeps });

  const internalSecret =
    settings.internalSharedSecret ??
    (store.mode === "embedded" && settings.dataDir !== IN_MEMORY_DATA_DIR
      ? await writeAdminToken(settings.dataDir)
      : randomSecretNobodyKnows());

  const itemSealSecret = await readItemSealSecret({
    internalSharedSecret: settings.internalSharedSecret,
    dataDir: settings.dataDir,
    distributed: store.mode === "postgres",
    warn: (message) => logger.warn(message),
  });
  const firstStart = store.mode === "embedded" ? await bootstrapEmbeddedWorkspace(store, config) : undefined;
  if (options.announce) options.announce(await describeStart(store, config, firstStart));

  const authenticator = await createAuthenticator(store, state, { cacheTtlMs: options.authCacheTtlMs });
  const admin = createAdminService({
    store,
    state: evictBeforePublish(state, authenticator),
    spendGuard,
    maxCacheTtlSeconds: config.responseCache.maxTtlSeconds,
  });
  const playgroundKeyPolicy = Object.assign({}, DEFAULT_PLAYGROUND_KEY_POLICY, options.playgroundKeyPolicy);
  const purge = startPlaygroundKeyPurge(store, {
    intervalMs: playgroundKeyPolicy.purgeIntervalMs,
    onError: (error) => logger.warn({ err: error }, "playground key purge failed"),
    onPurged: (count) => logger.info({ count }, "purged expired playground keys"),
  });
  const serverTools = config.serverTools
    ? createServerTools(config.serverTools, { env: process.env, ...options.serverTools })
    : undefined;
  if (serverTools !== undefined) {
    warnIfWebFetchUnsafe(toWebFetchSettings(config.serverTools!.webFetch), logger);
    for (const line of serverTools.missingConfiguration) logger.warn(`server tool not usable: ${line}`);
  }
  // Cost quotes run admission up to its reservation (limits/dry-run-guard.ts).
  const dryRuns = createDryRunGuard(spendGuard);
  const engine = new GenerationEngine({
    config,
    store,
    adapters: createAdapters(),
    logger,
    spendGuard: dryRuns.guard,
    ...(serverTools === undefined ? {} : { serverTools, documents: serverTools.documents }),
    ...(deadInstances === undefined ? {} : { instanceId }),
    answerCache: createResponseCache({
      store: openResponseCacheStore(state, config.responseCache.memoryBytes),
      logger,
      maxEntryBytes: config.responseCache.maxEntryBytes,
      maxTtlSeconds: config.responseCache.maxTtlSeconds,
    }),
  });
  // Each instance's breaker states for the admin API's providers page (engine/breaker-reports.ts).
  const breakerReportStore = createBreakerReportStore(state);
  const breakerReporter = startBreakerReporter({
    instanceId,
    store: breakerReportStore,
    readStates: () => engine.routeBreakerStates(),
    leaseMs: config.instanceLeaseMs,
    logger,
  });
  const inFlight = createInFlightRequests(limits.maxRequestsInFlight);
  const metrics = config.metrics.enabled
    ? new GatewayMetrics({
        catalogModels: config.models.map((model) => model.slug),
        requestsInFlight: () => inFlight.size,
        generationsInFlight: () => engine.generationsInFlight,
        heldAnswerBytes: readHeldAnswerBytes,
        routeBreakerStates: () => engine.routeBreakerStates(),
      })
    : undefined;
  // The OpenTelemetry modules are loaded only here, and only when an endpoint is configured.
  const tracer = settings.tracing ? await loadRequestTracer(settings.tracing, logger) : undefined;
  const itemSeal = createItemSeal(deriveItemSealKey(itemSealSecret));
  const router = createApp({
    config,
    store,
    state,
    authenticator,
    engine,
    admin,
    spendGuard,
    dryRuns,
    alertWebhookAllowLoopback: settings.alertWebhookAllowLoopback === true,
    internalSecret,
    logger,
    isDraining: () => inFlight.draining,
    keepAliveMs: options.keepAliveMs,
    internalSharedSecret: settings.internalSharedSecret,
    playgroundKeyPolicy,
    itemSeal,
    metrics,
    tracer,
    breakers: { current: breakerReporter.current, list: () => breakerReportStore.list() },
  });
  // The Responses WebSocket mode on /api/v1/responses (docs/formats.md, "WebSocket mode").
  const sockets = createResponsesSockets({
    format: createResponsesFormat(itemSeal),
    authenticator,
    generation: { engine, requestShape: config.requestShape, keepAliveMs: options.keepAliveMs },
    maxMessageBytes: config.maxBodyBytes,
    clientReadTimeoutMs: config.clientReadTimeoutMs,
    idleTimeoutMs: config.webSocketIdleTimeoutMs,
    pingIntervalMs: options.keepAliveMs ?? KEEP_ALIVE_INTERVAL_MS,
    logger,
    report: router.report,
    tracer,
    inFlight,
  });

  const listener = createRequestListener({ router, inFlight });
  const server = await new Promise<Server>((resolve, reject) => {
    const instance = createServer(
      {
        // Slow clients (docs/operations.md): headers and the whole request each have a deadline,
        // checked every second; Node answers 408 and closes the connection.
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
        requestTimeout: limits.requestTimeoutMs,
        connectionsCheckingInterval: CONNECTION_CHECK_INTERVAL_MS,
        // What a response queues for its client before `write` says to wait (backpressure).
        highWaterMark: RESPONSE_HIGH_WATER_BYTES,
        // Request line and headers together; larger → 431 and the connection closed.
        maxHeaderSize: limits.maxHeaderBytes,
        // Stated, not assumed: Content-Length with Transfer-Encoding, a repeated or malformed
        // Content-Length and obs-folded headers are refused with 400 (request smuggling).
        insecureHTTPParser: false,
        // Only WebSocket handshakes go to the 'upgrade' listener; `Upgrade: h2c` stays a request.
        IncomingMessage: WebSocketAwareIncomingMessage,
      },
      listener,
    );
    instance.on("upgrade", sockets.handleUpgrade);
    // At the connection cap the longest-idle connection makes room (not Node's maxConnections,
    // which refuses every new one); a connection that asks nothing is closed early.
    manageConnectionRoom(instance, limits, (pressure) =>
      logger.warn(pressure, "connection cap reached: idle connections closed to make room"),
    );
    instance.once("error", reject);
    instance.listen(settings.port, settings.host, () => resolve(instance));
  });
  const watchdog = startEventLoopWatchdog(logger, limits.eventLoopStallMs);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${settings.host.includes(":") ? `[${settings.host}]` : settings.host}:${port}`;
  // The admin CLI finds this gateway from its data folder (storage/data-dir/gateway-address.ts).
  const addressFolder =
    store.mode === "embedded" && settings.dataDir !== IN_MEMORY_DATA_DIR ? settings.dataDir : undefined;
  if (addressFolder !== undefined) await writeGatewayUrl(addressFolder, url);
  logger.info(
    {
      url,
      database: store.mode,
      ...(store.mode === "embedded" ? { pgliteThread } : {}),
      state: state.mode,
      models: config.models.length,
    },
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
    spendGuard,
    admin,
    replayParkedOutcomes: () => generations.replayParkedOutcomes(),
    purgeExpiredPlaygroundKeys: () => purge.runNow(),
    sweepInterrupted: () => sweep.runNow(),
    pdfStats: () => serverTools?.pdfStats(),
    htmlConversionStats: () => serverTools?.htmlConversionStats(),
    close() {
      closing ??= (async () => {
        await drainInstance({
          server,
          inFlight,
          engine,
          logger,
          drainTimeoutMs: options.drainMs ?? limits.drainTimeoutMs,
          sockets,
        });
        if (addressFolder !== undefined) await removeGatewayUrl(addressFolder);
        watchdog.stop();
        metrics?.close();
        // After the drain: the last requests' spans are queued by now.
        await tracer?.shutdown();
        await purge.stop();
        await sweep.stop();
        await deadInstances?.stop();
        await breakerReporter.stop();
        await authenticator.close();
        await spendGuard.close();
        await serverTools?.close();
        await state.close();
        // Parked outcomes not yet replayed stay in the outbox file for the next start.
        await generations.close();
        await store.close();
      })();
      return closing;
    },
  };
}

/** How often Node checks the header and request deadlines of open connections. */
const CONNECTION_CHECK_INTERVAL_MS = 1_000;
/** Outbox events carry request ids and counts only: no key material, no prompt. */
function logOutboxEvent(logger: Logger, event: OutboxEvent): void {
  switch (event.type) {
    case "parked":
      logger.warn({ requestId: event.id, reason: event.reason }, "usage record parked in the outbox");
      break;
    case "replayed":
      logger.info(
        { applied: event.applied, setAside: event.setAside, remaining: event.remaining },
        "replayed parked usage records",
      );
      break;
    case "set-aside":
      logger.error({ requestId: event.id, reason: event.reason }, "parked usage record set aside");
      break;
    case "replay-blocked":
      logger.warn(
        { remaining: event.remaining, retryInMs: event.retryInMs },
        "usage replay waits for the database",
      );
      break;
    case "replay-error":
      logger.error({ err: event.error, retryInMs: event.retryInMs }, "usage outbox replay failed");
      break;
  }
}

const ONE_DAY_MS = 24 * 60 * 60 * 1000;

function randomSecretNobodyKnows(): string {
  // Distributed mode without INTERNAL_SHARED_SECRET: the admin HTTP API stays closed; the CLI
  // talks to Postgres directly instead.
  return crypto.randomUUID() + crypto.randomUUID();
}
