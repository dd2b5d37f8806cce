/**
 * The generation endpoints (chat completions, responses, messages) and the messages format's
 * token count. The generation handlers work on the Node request and response themselves
 * (handle-generation.ts, node-route-handler.ts).
 */
import { type Authenticator, readBearerOrApiKey, readBearerToken } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import { chatCompletionsFormat } from "../../ingress/chat-completions/index.js";
import { chatCompletionRequestSchema } from "../../ingress/chat-completions/request-schema.js";
import { chatCompletionResponseSchema } from "../../ingress/chat-completions/response-schema.js";
import type { HeaderReader } from "../../ingress/ingress-format.js";
import {
  messagesCountTokensRequestSchema,
  messagesCountTokensResponseSchema,
  messagesFormat,
  messagesRequestSchema,
  messagesResponseSchema,
} from "../../ingress/messages/index.js";
import {
  createResponsesFormat,
  type ItemSeal,
  responsesRequestSchema,
  responsesResponseSchema,
} from "../../ingress/responses/index.js";
import { createCountTokensHandler } from "../generation/handle-count-tokens.js";
import { createGenerationHandler, type GenerationRouteDeps } from "../generation/handle-generation.js";
import { HEADROOM_HEADER_DESCRIPTIONS } from "../generation/headroom-headers.js";
import { createNodeRouteHandler } from "../generation/node-route-handler.js";
import {
  BEARER,
  BEARER_OR_API_KEY,
  COMMON_ERRORS,
  jsonResponse,
  MESSAGES_ERRORS,
} from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";

export interface GenerationRoutesDeps extends GenerationRouteDeps {
  config: GatewayConfig;
  authenticator: Authenticator;
  /** Seals Responses items into their ids so `item_reference`s resolve (absent: they are refused). */
  itemSeal?: ItemSeal;
}

const readBearer = (headers: HeaderReader) => readBearerToken(headers.get("authorization") ?? undefined);
// The messages format also accepts Anthropic's own header.
const readMessagesKey = readBearerOrApiKey;

export function createGenerationRoutes(deps: GenerationRoutesDeps): RouteDefinition[] {
  return [
    {
      method: "POST",
      path: "/api/v1/chat/completions",
      summary: "Create a chat completion (any catalog model)",
      security: BEARER,
      request: { body: chatCompletionRequestSchema },
      responses: {
        200: {
          description: "A chat.completion object; with stream:true an SSE stream of chat.completion.chunk",
          headers: HEADROOM_HEADER_DESCRIPTIONS,
          json: chatCompletionResponseSchema,
          eventStream: true,
        },
        ...COMMON_ERRORS,
      },
      handler: createNodeRouteHandler(createGenerationHandler(chatCompletionsFormat, deps, readBearer)),
    },
    {
      method: "POST",
      path: "/api/v1/responses",
      summary: "Create a response (stateless; any catalog model)",
      description:
        "Also served in the Responses WebSocket mode: GET /api/v1/responses with Upgrade: websocket " +
        "and the same bearer key, then one response.create message per turn; the events of each turn " +
        "come back as messages, and previous_response_id may name the socket's own last response.",
      security: BEARER,
      request: { body: responsesRequestSchema },
      responses: {
        200: {
          description: "A response object; with stream:true an SSE stream of response events",
          headers: HEADROOM_HEADER_DESCRIPTIONS,
          json: responsesResponseSchema,
          eventStream: true,
        },
        ...COMMON_ERRORS,
      },
      handler: createNodeRouteHandler(
        createGenerationHandler(createResponsesFormat(deps.itemSeal), deps, readBearer),
      ),
    },
    {
      method: "POST",
      path: "/api/v1/messages",
      summary: "Create a message (messages format; any catalog model)",
      description: "Authenticate with Authorization: Bearer or x-api-key; no version header is required.",
      security: BEARER_OR_API_KEY,
      request: { body: messagesRequestSchema },
      responses: {
        200: {
          description: "A message; with stream:true an SSE stream of message events",
          headers: HEADROOM_HEADER_DESCRIPTIONS,
          json: messagesResponseSchema,
          eventStream: true,
        },
        ...MESSAGES_ERRORS,
      },
      handler: createNodeRouteHandler(createGenerationHandler(messagesFormat, deps, readMessagesKey)),
    },
    {
      method: "POST",
      path: "/api/v1/messages/count_tokens",
      summary: "Count the input tokens of a messages request (free, no generation)",
      security: BEARER_OR_API_KEY,
      request: { body: messagesCountTokensRequestSchema },
      responses: { 200: jsonResponse(messagesCountTokensResponseSchema, "Token count"), ...MESSAGES_ERRORS },
      handler: createCountTokensHandler(deps.authenticator, deps.config, readMessagesKey),
    },
  ];
}
