/** Assembles the HTTP application. The only place that knows every route. */
import { Hono } from "hono";
import type { AdminService } from "../admin/admin-service.js";
import { type Authenticator, readBearerOrApiKey, readBearerToken } from "../auth/authenticate.js";
import { DEFAULT_PLAYGROUND_KEY_POLICY, type PlaygroundKeyPolicy } from "../auth/playground-key-policy.js";
import type { GatewayConfig } from "../config/types.js";
import type { GenerationEngine } from "../engine/generation-engine.js";
import { createCommonErrorEnvelope } from "../errors/envelopes.js";
import { GatewayError } from "../errors/gateway-error.js";
import { chatCompletionsFormat } from "../ingress/chat-completions/index.js";
import type { HeaderReader } from "../ingress/ingress-format.js";
import { messagesFormat } from "../ingress/messages/index.js";
import { createResponsesFormat, type ItemSeal } from "../ingress/responses/index.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import type { SharedState, Store } from "../storage/store.js";
import type { AppEnv } from "./app-env.js";
import { createUnhandledErrorAnswer } from "./error-response.js";
import { findAllowedMethods } from "./find-allowed-methods.js";
import { createCountTokensHandler } from "./handle-count-tokens.js";
import { createGenerationHandler, type GenerationHandler, toHonoRoute } from "./handle-generation.js";
import { createOpenApiDocument } from "./openapi-document.js";
import { requestIdMiddleware } from "./request-id.js";
import { createAdminRoutes } from "./routes/admin-routes.js";
import { createAdminUsageRoutes } from "./routes/admin-usage-routes.js";
import { createConsoleRoutes } from "./routes/console-routes.js";
import { createDocsRoutes } from "./routes/docs-routes.js";
import { createGenerationLookupRoute } from "./routes/generation-lookup-route.js";
import { createHealthRoutes } from "./routes/health-routes.js";
import { createKeyInfoRoute } from "./routes/key-info-route.js";
import { createModelsRoute } from "./routes/models-route.js";
import { createPlaygroundKeysRoute } from "./routes/playground-keys-route.js";

export interface AppDependencies {
  config: GatewayConfig;
  store: Store;
  state: SharedState;
  authenticator: Authenticator;
  engine: GenerationEngine;
  admin: AdminService;
  spendGuard: SpendGuard;
  internalSecret: string;
  logger: Logger;
  isDraining: () => boolean;
  /** INTERNAL_SHARED_SECRET exactly as configured (no embedded fallback); unset disables playground keys. */
  internalSharedSecret?: string;
  playgroundKeyPolicy?: PlaygroundKeyPolicy;
  /** Overrides the 15 s SSE keep-alive (tests). */
  keepAliveMs?: number;
  /** Seals Responses items into their ids so `item_reference`s resolve (absent: they are refused). */
  itemSeal?: ItemSeal;
}

/** The Hono application, and the generation endpoints the request listener serves before it. */
export interface GatewayHttp {
  app: Hono<AppEnv>;
  directPosts: ReadonlyMap<string, GenerationHandler>;
}

export function createApp(deps: AppDependencies): GatewayHttp {
  const app = new Hono<AppEnv>();
  app.use("*", requestIdMiddleware(deps.logger));

  app.route("/", createHealthRoutes(deps.store, deps.state, deps.isDraining));
  app.route("/", createModelsRoute(deps.config));
  app.route("/", createGenerationLookupRoute(deps.store, deps.authenticator));
  app.route("/", createKeyInfoRoute(deps));
  app.route("/internal/admin", createAdminRoutes(deps.admin, deps.internalSecret));
  app.route(
    "/internal/admin",
    createAdminUsageRoutes({
      store: deps.store,
      spendGuard: deps.spendGuard,
      internalSecret: deps.internalSecret,
      defaultRequestsPerMinute: deps.config.defaultRequestsPerMinute,
    }),
  );
  app.route(
    "/",
    createPlaygroundKeysRoute({
      store: deps.store,
      internalSharedSecret: deps.internalSharedSecret,
      policy: deps.playgroundKeyPolicy ?? DEFAULT_PLAYGROUND_KEY_POLICY,
    }),
  );

  app.route("/", createDocsRoutes());
  app.route("/", createConsoleRoutes());

  // Built on the first request, not at start: generating it from the schemas is a noticeable share
  // of the start's CPU, and most gateways are never asked for it.
  let openApiBody: string | undefined;
  app.get("/openapi.json", (c) => {
    openApiBody ??= JSON.stringify(createOpenApiDocument());
    c.header("Content-Type", "application/json");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(openApiBody);
  });

  const generationDeps = {
    engine: deps.engine,
    authenticator: deps.authenticator,
    maxBodyBytes: deps.config.maxBodyBytes,
    requestShape: deps.config.requestShape,
    keepAliveMs: deps.keepAliveMs,
    clientReadTimeoutMs: deps.config.clientReadTimeoutMs,
  };
  const readBearer = (headers: HeaderReader) => readBearerToken(headers.get("authorization") ?? undefined);
  // The messages format also accepts Anthropic's own header.
  const readMessagesKey = readBearerOrApiKey;
  // Served by the request listener before Hono (request-listener.ts) and, for paths it does not
  // match literally, by the same handlers as Hono routes.
  const directPosts = new Map<string, GenerationHandler>([
    ["/api/v1/chat/completions", createGenerationHandler(chatCompletionsFormat, generationDeps, readBearer)],
    [
      "/api/v1/responses",
      createGenerationHandler(createResponsesFormat(deps.itemSeal), generationDeps, readBearer),
    ],
    ["/api/v1/messages", createGenerationHandler(messagesFormat, generationDeps, readMessagesKey)],
  ]);
  for (const [path, handler] of directPosts) app.post(path, toHonoRoute(handler));
  app.post(
    "/api/v1/messages/count_tokens",
    createCountTokensHandler(deps.authenticator, deps.config, readMessagesKey),
  );

  // A path served under other methods answers 405 with Allow; a path served under none, 404.
  app.notFound((c) => {
    const allowed = findAllowedMethods(app, c.req.path);
    // A route of this very method that answered notFound itself (an unknown file under /docs or
    // /console) is a 404, not a 405.
    const servedForMethod = allowed.includes(c.req.method);
    if (allowed.length > 0 && !servedForMethod) {
      const error = GatewayError.invalidRequest(
        `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(", ")}`,
        null,
      );
      c.header("Allow", allowed.join(", "));
      return c.json(createCommonErrorEnvelope(error, c.get("requestId")), 405);
    }
    const error = GatewayError.invalidRequest(`No route for ${c.req.method} ${c.req.path}`, null);
    return c.json(createCommonErrorEnvelope(error, c.get("requestId")), 404);
  });
  app.onError((thrown, c) => {
    const answer = createUnhandledErrorAnswer(thrown, c.get("requestId") ?? "unknown", deps.logger);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return { app, directPosts };
}
