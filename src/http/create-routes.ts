/**
 * The route table: every endpoint the gateway serves, in one list. The router (register-routes.ts)
 * and /openapi.json (openapi-document.ts) are both built from it.
 */
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/authenticate.js";
import { DEFAULT_PLAYGROUND_KEY_POLICY, type PlaygroundKeyPolicy } from "../auth/playground-key-policy.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { GenerationEngine } from "../engine/generation-engine.js";
import type { ItemSeal } from "../ingress/responses/index.js";
import type { DryRunGuard } from "../limits/dry-run-guard.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { GatewayMetrics } from "../observability/index.js";
import type { SharedState, Store } from "../storage/store.js";
import { createOpenApiDocument } from "./openapi/openapi-document.js";
import type { OpenApiTag } from "./openapi/openapi-tags.js";
import type { RouteDefinition } from "./router/route-definition.js";
import { createAdminActivityRoutes } from "./routes/admin-activity-routes.js";
import { createAdminAlertRoutes } from "./routes/admin-alert-routes.js";
import { createAdminConsoleRoutes } from "./routes/admin-console-routes.js";
import { type BreakerReportReader, createAdminProviderRoutes } from "./routes/admin-provider-routes.js";
import { createAdminRoutes } from "./routes/admin-routes.js";
import { createAdminUsageRoutes } from "./routes/admin-usage-routes.js";
import { createConsoleRoutes } from "./routes/console-routes.js";
import { createDocsRoutes } from "./routes/docs-routes.js";
import { createGenerationLookupRoute } from "./routes/generation-lookup-route.js";
import { createGenerationRoutes } from "./routes/generation-routes.js";
import { createHealthRoutes } from "./routes/health-routes.js";
import { createHomeRoute } from "./routes/home-route.js";
import { createKeyInfoRoute } from "./routes/key-info-route.js";
import { createMetricsRoute } from "./routes/metrics-route.js";
import { createModelsRoutes } from "./routes/models-route.js";
import { createPlaygroundKeysRoute } from "./routes/playground-keys-route.js";

export interface RouteDependencies {
  config: GatewayConfig;
  store: Store;
  state: SharedState;
  authenticator: Authenticator;
  engine: GenerationEngine;
  admin: AdminService;
  spendGuard: SpendGuard;
  internalSecret: string;
  isDraining: () => boolean;
  /** INTERNAL_SHARED_SECRET exactly as configured (no embedded fallback); unset disables playground keys. */
  internalSharedSecret?: string;
  playgroundKeyPolicy?: PlaygroundKeyPolicy;
  /** Overrides the 15 s SSE keep-alive (tests). */
  keepAliveMs?: number;
  /** Seals Responses items into their ids so `item_reference`s resolve (absent: they are refused). */
  itemSeal?: ItemSeal;
  /** Every instance's circuit-breaker states (absent: this instance's alone, read from the engine). */
  breakers?: BreakerReportReader;
  /** Served at `GET /metrics` (absent: metrics are off, and so is the route). */
  metrics?: GatewayMetrics;
  /** The engine's spend guard's dry runs: cost quotes (absent: `X-Hi-Dry-Run` is refused). */
  dryRuns?: DryRunGuard;
  /** TESTS ONLY: budget-alert webhooks may target loopback (ALERT_WEBHOOK_ALLOW_LOOPBACK). */
  alertWebhookAllowLoopback?: boolean;
}

export function createRoutes(deps: RouteDependencies): RouteDefinition[] {
  const routes: RouteDefinition[] = [
    ...tagged(
      "generation",
      asPublicApi(
        createGenerationRoutes({
          config: deps.config,
          engine: deps.engine,
          authenticator: deps.authenticator,
          maxBodyBytes: deps.config.maxBodyBytes,
          requestShape: deps.config.requestShape,
          keepAliveMs: deps.keepAliveMs,
          clientReadTimeoutMs: deps.config.clientReadTimeoutMs,
          itemSeal: deps.itemSeal,
          quotes:
            deps.dryRuns === undefined
              ? undefined
              : {
                  config: deps.config,
                  engine: deps.engine,
                  dryRuns: deps.dryRuns,
                  keyLimits: deps.store.keyLimits,
                  spendGuard: deps.spendGuard,
                  requestShape: deps.config.requestShape,
                },
        }),
      ),
    ),
    ...tagged("operations", createHealthRoutes(deps.store, deps.state, deps.isDraining)),
    ...tagged("catalog", asPublicApi(createModelsRoutes(deps.config))),
    ...tagged("lookup", asPublicApi([createGenerationLookupRoute(deps.store, deps.authenticator)])),
    ...tagged("keys", [
      ...asPublicApi([createKeyInfoRoute(deps)]),
      createPlaygroundKeysRoute({
        store: deps.store,
        internalSharedSecret: deps.internalSharedSecret,
        policy: deps.playgroundKeyPolicy ?? DEFAULT_PLAYGROUND_KEY_POLICY,
      }),
    ]),
    ...tagged("admin", [
      ...createAdminRoutes(deps.admin, deps.internalSecret),
      ...createAdminAlertRoutes({
        store: deps.store,
        internalSecret: deps.internalSecret,
        policy: { allowHttp: false, allowLoopback: deps.alertWebhookAllowLoopback === true },
      }),
      ...createAdminUsageRoutes({
        store: deps.store,
        spendGuard: deps.spendGuard,
        internalSecret: deps.internalSecret,
        defaultRequestsPerMinute: deps.config.defaultRequestsPerMinute,
        settlements: deps.engine,
      }),
      ...createAdminActivityRoutes({ store: deps.store, internalSecret: deps.internalSecret }),
      ...createAdminProviderRoutes({
        config: deps.config,
        internalSecret: deps.internalSecret,
        breakers: deps.breakers ?? {
          current: () => ({
            instanceId: "this",
            reportedAt: Date.now(),
            routes: deps.engine.routeBreakerStates(),
          }),
          list: async () => [],
        },
      }),
      ...createAdminConsoleRoutes({
        store: deps.store,
        spendGuard: deps.spendGuard,
        internalSecret: deps.internalSecret,
        playgroundKeyPolicy: deps.playgroundKeyPolicy ?? DEFAULT_PLAYGROUND_KEY_POLICY,
      }),
    ]),
    ...tagged("operations", [createHomeRoute(), ...createDocsRoutes(), ...createConsoleRoutes()]),
  ];
  if (deps.metrics !== undefined) {
    routes.push(
      ...tagged("operations", [
        createMetricsRoute(deps.metrics, {
          requireInternalToken: deps.config.metrics.requireInternalToken,
          internalSecret: deps.internalSecret,
        }),
      ]),
    );
  }
  routes.push(createOpenApiRoute(routes));
  return routes;
}

/**
 * The bearer-key API, which browsers on other origins may call (cors.ts). Not the playground-key
 * route: it sits under /api/v1 but takes the internal token, so it is called from servers only.
 */
function asPublicApi(routes: RouteDefinition[]): RouteDefinition[] {
  return routes.map((route) => ({ publicApi: true, ...route }));
}

/** The group of /docs the routes appear under (openapi-tags.ts): one per route, set here for a whole group. */
function tagged(tag: OpenApiTag, routes: RouteDefinition[]): RouteDefinition[] {
  return routes.map((route) => Object.assign({}, route, { tags: [tag] }));
}

/** `GET /openapi.json`: the document of the table, this route included. */
function createOpenApiRoute(routes: readonly RouteDefinition[]): RouteDefinition {
  // Built on the first request, not at start: generating it from the schemas takes a noticeable
  // moment of CPU, and most gateways are never asked for it.
  let body: string | undefined;
  return {
    method: "GET",
    path: "/openapi.json",
    summary: "This document",
    tags: ["operations"] satisfies OpenApiTag[],
    responses: { 200: { description: "OpenAPI 3.1 document", mediaType: "application/json" } },
    handler: (c) => {
      body ??= JSON.stringify(createOpenApiDocument(routes));
      c.header("Content-Type", "application/json");
      c.header("Cache-Control", "public, max-age=300");
      return c.body(body);
    },
  };
}
