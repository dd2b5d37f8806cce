/**
 * `GET /internal/admin/routes`: every catalog model's routes, whether each route's provider has
 * its API key (never the key itself), and each route's circuit-breaker state on every live
 * instance: this instance's read now, the others' from the reports they publish into shared state
 * (engine/breaker-reports.ts), at most a sixth of an instance lease old.
 */
import { isInternalTokenValid } from "../../auth/internal-token.js";
import { isMissingProviderKey } from "../../catalog/provider-key.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import type { BreakerReport } from "../../engine/breaker-reports.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError, toGatewayError } from "../../errors/gateway-error.js";
import { adminRoutesSchema } from "../openapi/openapi-admin-schemas.js";
import { COMMON_ERRORS, INTERNAL_TOKEN, jsonResponse } from "../openapi/route-responses.js";
import { createErrorResponse } from "../router/error-response.js";
import type { RouteDefinition } from "../router/route-definition.js";

export interface BreakerReportReader {
  /** This instance's report, read now. */
  current(): BreakerReport;
  /** Every instance's last published report. */
  list(): Promise<BreakerReport[]>;
}

export function createAdminProviderRoutes(deps: {
  config: GatewayConfig;
  breakers: BreakerReportReader;
  internalSecret: string;
}): RouteDefinition[] {
  return [
    {
      method: "GET",
      path: "/internal/admin/routes",
      summary: "Each model's routes, whether their provider key is set, their breaker state per instance",
      security: INTERNAL_TOKEN,
      responses: { 200: jsonResponse(adminRoutesSchema, "Models, routes and breakers"), ...COMMON_ERRORS },
      handler: async (c) => {
        const requestId = c.requestId;
        try {
          if (!isInternalTokenValid(c.req.header("x-internal-token"), deps.internalSecret)) {
            throw new GatewayError("invalid_api_key", "Missing or wrong X-Internal-Token");
          }
          return c.json(await describeRoutes(deps.config, deps.breakers));
        } catch (thrown) {
          const error = toGatewayError(thrown);
          return createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
        }
      },
    },
  ];
}

async function describeRoutes(config: GatewayConfig, breakers: BreakerReportReader) {
  const own = breakers.current();
  // Shared state unreachable: this instance still answers for itself.
  const published = await breakers.list().catch(() => []);
  const reports = [own, ...published.filter((report) => report.instanceId !== own.instanceId)].sort((a, b) =>
    a.instanceId === own.instanceId
      ? -1
      : b.instanceId === own.instanceId
        ? 1
        : a.instanceId.localeCompare(b.instanceId),
  );
  const stateOf = reports.map((report) => ({
    instanceId: report.instanceId,
    states: new Map(report.routes.map((route) => [`${route.provider}/${route.upstreamModel}`, route.state])),
  }));
  return {
    instance_id: own.instanceId,
    instances: reports.map((report) => ({
      instance_id: report.instanceId,
      reported_at: new Date(report.reportedAt).toISOString(),
    })),
    models: config.models.map((model) => ({
      slug: model.slug,
      name: model.name,
      routes: model.routes.map((route) => {
        const key = `${route.provider.id}/${route.upstreamModel}`;
        return {
          provider: route.provider.id,
          provider_kind: route.provider.kind,
          upstream_model: route.upstreamModel,
          key_variable: route.provider.apiKeyEnv ?? null,
          key_set: !isMissingProviderKey(route.provider),
          breakers: stateOf.map(({ instanceId, states }) => ({
            instance_id: instanceId,
            state: states.get(key) ?? "closed",
          })),
        };
      }),
    })),
  };
}
