/**
 * `GET /metrics`: this instance's Prometheus metrics in the text exposition format
 * (docs/operations.md, "Metrics"). With `metrics.require_internal_token`, only for a caller that
 * presents the internal token, in `X-Internal-Token` or as `Authorization: Bearer <token>` (what a
 * Prometheus scrape job's `authorization` setting sends).
 */
import { isInternalTokenValid } from "../../auth/internal-token.js";
import { createCommonErrorEnvelope, createErrorHeaders } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { GatewayMetrics } from "../../observability/index.js";
import { commonErrorSchema } from "../openapi/openapi-schemas.js";
import { INTERNAL_TOKEN, jsonResponse } from "../openapi/route-responses.js";
import type { RouteContext } from "../router/route-context.js";
import type { RouteDefinition } from "../router/route-definition.js";

export interface MetricsRouteOptions {
  requireInternalToken: boolean;
  internalSecret: string;
}

export function createMetricsRoute(metrics: GatewayMetrics, options: MetricsRouteOptions): RouteDefinition {
  const { requireInternalToken, internalSecret } = options;
  return {
    method: "GET",
    path: "/metrics",
    summary: "Prometheus metrics of this instance",
    description: requireInternalToken
      ? "The internal token goes in X-Internal-Token or as Authorization: Bearer."
      : undefined,
    security: requireInternalToken ? INTERNAL_TOKEN : undefined,
    responses: {
      200: { description: "Prometheus text exposition format", mediaType: "text/plain" },
      ...(requireInternalToken
        ? { 401: jsonResponse(commonErrorSchema, "Missing or wrong internal token") }
        : {}),
    },
    handler: async (c) => {
      if (requireInternalToken && !isInternalTokenValid(readToken(c), internalSecret)) {
        const error = new GatewayError("invalid_api_key", "Missing or wrong internal token");
        return new Response(JSON.stringify(createCommonErrorEnvelope(error, c.requestId)), {
          status: error.status,
          headers: { "Content-Type": "application/json", ...createErrorHeaders(error) },
        });
      }
      const { contentType, body } = await metrics.render();
      c.header("Content-Type", contentType);
      c.header("Cache-Control", "no-store");
      return c.body(body);
    },
  };
}

function readToken(c: RouteContext): string | undefined {
  const header = c.req.header("x-internal-token");
  if (header !== undefined) return header;
  const authorization = c.req.header("authorization");
  const match = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}
