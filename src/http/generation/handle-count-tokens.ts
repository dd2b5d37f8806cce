/**
 * `POST /api/v1/messages/count_tokens`: agents call it every turn, so it is cheap — a local
 * tokenizer estimate, no upstream call, no charge, no generation rate limit.
 */
import type { Authenticator } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import { createNotAllowedError, resolveModel } from "../../engine/admit-request.js";
import { createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import type { HeaderReader } from "../../ingress/ingress-format.js";
import { countMessagesTokens } from "../../ingress/messages/index.js";
import { checkRequestShape } from "../../ingress/shared/check-request-shape.js";
import { readNodeJsonBody } from "../json/read-json-body.js";
import { createRequestJsonShape } from "../json/request-json-shape.js";
import { classifyCaught, createErrorResponse } from "../router/error-response.js";
import type { RouteContext } from "../router/route-context.js";

export function createCountTokensHandler(
  authenticator: Authenticator,
  config: GatewayConfig,
  readApiKey: (headers: HeaderReader) => string | undefined,
) {
  const jsonShape = createRequestJsonShape(config.requestShape);
  return async (c: RouteContext): Promise<Response> => {
    const requestId = c.requestId;
    try {
      const caller = await authenticator.authenticate(readApiKey(c.req.headers));
      c.requestLog.caller = caller;
      const body = await readNodeJsonBody(c.incoming, config.maxBodyBytes, jsonShape);
      checkRequestShape(body, "anthropic_messages", config.requestShape);
      const model =
        typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
      if (typeof model === "string") {
        const entry = resolveModel(config, model);
        const allowed = caller.key.allowedModels;
        if (allowed && allowed.length > 0 && !allowed.includes(entry.slug)) {
          throw createNotAllowedError(entry.slug, model, "model");
        }
      }
      return c.json(countMessagesTokens(body, c.req.headers));
    } catch (thrown) {
      const error = classifyCaught(thrown, requestId, c.logger);
      return createErrorResponse(error, createMessagesErrorEnvelope(error, requestId), requestId);
    }
  };
}
