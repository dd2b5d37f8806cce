/**
 * /openapi.json: OpenAPI 3.1 generated from the same zod schemas that validate requests.
 * Every implemented endpoint is registered here (test/openapi.test.ts compares with the router).
 */

import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { ZodType } from "zod";
import { chatCompletionRequestSchema } from "../ingress/chat-completions/request-schema.js";
import { chatCompletionResponseSchema } from "../ingress/chat-completions/response-schema.js";
import {
  messagesCountTokensRequestSchema,
  messagesCountTokensResponseSchema,
  messagesRequestSchema,
  messagesResponseSchema,
} from "../ingress/messages/index.js";
import { responsesRequestSchema, responsesResponseSchema } from "../ingress/responses/index.js";
import { registerAdminPaths } from "./openapi-admin-paths.js";
import { registerAdminUsagePaths } from "./openapi-admin-usage-paths.js";
import {
  catalogModelSchema,
  commonErrorSchema,
  generationSchema,
  livenessSchema,
  messagesErrorSchema,
  modelListSchema,
  readinessSchema,
} from "./openapi-schemas.js";
import { keyInfoSchema } from "./routes/key-info-route.js";
import { playgroundKeyRequestSchema, playgroundKeyResponseSchema } from "./routes/playground-keys-route.js";

const json = (schema: ZodType, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const errorResponses = {
  "4XX": json(commonErrorSchema, "Error in the common envelope"),
  "5XX": json(commonErrorSchema, "Error in the common envelope"),
};

export function createOpenApiDocument(): Record<string, unknown> {
  const app = new OpenAPIHono();
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "bearerKey", { type: "http", scheme: "bearer" });
  registry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
  });
  const bearer = [{ bearerKey: [] }];

  registry.registerPath({
    method: "post",
    path: "/api/v1/chat/completions",
    summary: "Create a chat completion (any catalog model)",
    security: bearer,
    request: {
      body: { required: true, content: { "application/json": { schema: chatCompletionRequestSchema } } },
    },
    responses: {
      200: {
        description: "A chat.completion object; with stream:true an SSE stream of chat.completion.chunk",
        content: {
          "application/json": { schema: chatCompletionResponseSchema },
          "text/event-stream": { schema: { type: "string" } },
        },
      },
      ...errorResponses,
    },
  });
  registry.registerPath({
    method: "post",
    path: "/api/v1/responses",
    summary: "Create a response (stateless; any catalog model)",
    security: bearer,
    request: {
      body: { required: true, content: { "application/json": { schema: responsesRequestSchema } } },
    },
    responses: {
      200: {
        description: "A response object; with stream:true an SSE stream of response events",
        content: {
          "application/json": { schema: responsesResponseSchema },
          "text/event-stream": { schema: { type: "string" } },
        },
      },
      ...errorResponses,
    },
  });
  const messagesErrors = {
    "4XX": json(messagesErrorSchema, "Error in the messages envelope"),
    "5XX": json(messagesErrorSchema, "Error in the messages envelope"),
  };
  registry.registerPath({
    method: "post",
    path: "/api/v1/messages",
    summary: "Create a message (messages format; any catalog model)",
    description: "Authenticate with Authorization: Bearer or x-api-key; no version header is required.",
    security: [...bearer, { apiKeyHeader: [] }],
    request: { body: { required: true, content: { "application/json": { schema: messagesRequestSchema } } } },
    responses: {
      200: {
        description: "A message; with stream:true an SSE stream of message events",
        content: {
          "application/json": { schema: messagesResponseSchema },
          "text/event-stream": { schema: { type: "string" } },
        },
      },
      ...messagesErrors,
    },
  });
  registry.registerPath({
    method: "post",
    path: "/api/v1/messages/count_tokens",
    summary: "Count the input tokens of a messages request (free, no generation)",
    security: [...bearer, { apiKeyHeader: [] }],
    request: {
      body: { required: true, content: { "application/json": { schema: messagesCountTokensRequestSchema } } },
    },
    responses: { 200: json(messagesCountTokensResponseSchema, "Token count"), ...messagesErrors },
  });
  registry.registerPath({
    method: "get",
    path: "/api/v1/models",
    summary: "The public model catalog",
    responses: { 200: json(modelListSchema, "Catalog") },
  });
  registry.registerPath({
    method: "get",
    path: "/api/v1/models/{slug}",
    summary: "One model of the catalog",
    description: "The slug contains a slash; send it as is or percent-encoded (`openai%2Fgpt-4.1`).",
    request: { params: z.object({ slug: z.string().openapi({ example: "openai/gpt-4.1" }) }) },
    responses: {
      200: json(catalogModelSchema, "The model"),
      404: json(commonErrorSchema, "No such model (invalid_request)"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/api/v1/generation",
    summary: "Metadata of one request, by request id",
    description: "Authenticate with Authorization: Bearer or x-api-key.",
    security: [...bearer, { apiKeyHeader: [] }],
    request: { query: generationQuerySchema() },
    responses: { 200: json(generationSchema, "Generation metadata"), ...errorResponses },
  });
  registry.registerComponent("securitySchemes", "internalToken", {
    type: "apiKey",
    in: "header",
    name: "X-Internal-Token",
  });
  registry.registerPath({
    method: "post",
    path: "/api/v1/playground-keys",
    summary: "Mint a one-time playground key (internal: platform application only)",
    description:
      "Authenticated by X-Internal-Token (INTERNAL_SHARED_SECRET); API keys are refused. The key admits " +
      "exactly one request, expires 10 minutes after minting and is then purged. Minting is limited " +
      "per user_id (rate_limit_exceeded with Retry-After). Without a configured secret the endpoint answers 404.",
    security: [{ internalToken: [] }],
    request: {
      body: { required: true, content: { "application/json": { schema: playgroundKeyRequestSchema } } },
    },
    responses: { 201: json(playgroundKeyResponseSchema, "The minted key"), ...errorResponses },
  });
  registry.registerPath({
    method: "get",
    path: "/api/v1/key",
    summary: "The calling key: limits, spend per window, remaining headroom, rate limit, allowlist, expiry",
    security: bearer,
    responses: { 200: json(keyInfoSchema, "The calling key"), ...errorResponses },
  });
  registry.registerPath({
    method: "get",
    path: "/healthz",
    summary: "Liveness",
    responses: { 200: json(livenessSchema, "Alive") },
  });
  registry.registerPath({
    method: "get",
    path: "/readyz",
    summary: "Readiness (PostgreSQL and Redis)",
    responses: { 200: json(readinessSchema, "Ready"), 503: json(readinessSchema, "Degraded") },
  });
  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    responses: { 200: { description: "OpenAPI 3.1 document" } },
  });

  registerAdminPaths(registry);
  registerAdminUsagePaths(registry);

  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "AI gateway",
      version: "1",
      description:
        "Chat completions, responses and messages formats for every catalog model. A method a path " +
        "does not serve is answered 405 with an Allow header.",
    },
    servers: [{ url: "/" }],
  }) as unknown as Record<string, unknown>;
}

function generationQuerySchema() {
  return z.object({
    id: z.string().openapi({
      description:
        "The request id (X-Request-Id), or the response id that carries it: gen-<id>, resp_<id> or msg_<id>",
    }),
  });
}
