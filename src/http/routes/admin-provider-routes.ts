import { isMissingProviderKey } from "../../catalog/provider-key.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import type { BreakerReport } from "../../engine/breaker-reports.js";
import { adminRoutesSchema } from "../openapi/openapi-admin-schemas.js";
import { COMMON_ERRORS, jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createAdminRouteFactory } from "./internal-admin-route.js";

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
  const route = createAdminRouteFactory(deps.internalSecret);
  return [
    route(
      {
        path: "/routes",
        summary: "Each model's routes, whether their provider key is set, their breaker state per instance",
        responses: { 200: jsonResponse(adminRoutesSchema, "Models, routes and breakers"), ...COMMON_ERRORS },
      },
      () => describeRoutes(deps.config, deps.breakers),
    ),
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
