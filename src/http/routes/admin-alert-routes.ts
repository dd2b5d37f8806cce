/**
 * Admin API for budget alerts (under `/internal/admin`, header `X-Internal-Token`): a key's
 * thresholds, a workspace's webhook (its signing secret in the answer that sets it, and never
 * again), and the workspace's delivery attempts (docs/limits.md, "Budget alerts").
 */
import { z } from "zod";
import { createAlertSettings, DELIVERY_LIST_LIMIT } from "../../admin/alert-settings.js";
import type { AlertRepository } from "../../alerts/ports.js";
import { checkWebhookUrl, type WebhookPolicy } from "../../alerts/post-webhook.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Store } from "../../storage/store.js";
import { commonErrorSchema } from "../openapi/openapi-schemas.js";
import { jsonResponse } from "../openapi/route-responses.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createAdminRouteFactory, readAdminBody, readPathId } from "./internal-admin-route.js";

export interface AdminAlertRoutesDeps {
  store: Pick<Store, "apiKeys" | "workspaces"> & { alerts: AlertRepository };
  internalSecret: string;
  policy: WebhookPolicy;
}

const idParams = z.object({ id: z.string() });
const thresholdsSchema = z
  .array(z.number())
  .nullable()
  .meta({ description: "Percent of each spend limit (1..1000), e.g. [50, 80, 100]; null: none" });
const keyThresholdsBody = z.strictObject({ thresholds: thresholdsSchema });
const webhookBody = z.strictObject({
  url: z.string().nullable().meta({
    description: "https URL (private and loopback addresses are refused); null removes the webhook",
  }),
  thresholds: thresholdsSchema.optional(),
});
const answer = (description: string) => ({
  200: jsonResponse(z.object({}).loose(), description),
  "4XX": jsonResponse(commonErrorSchema, "Error"),
});

export function createAdminAlertRoutes(deps: AdminAlertRoutesDeps): RouteDefinition[] {
  const settings = createAlertSettings({
    alerts: deps.store.alerts,
    apiKeys: deps.store.apiKeys,
    workspaces: deps.store.workspaces,
    checkWebhookUrl: (url) => checkWebhookUrl(url, deps.policy),
  });
  const route = createAdminRouteFactory(deps.internalSecret);
  return [
    route(
      {
        method: "GET",
        path: "/keys/{id}/alert-thresholds",
        summary: "A key's own budget-alert thresholds",
        request: { params: idParams },
        responses: answer("The thresholds (null: the workspace's apply)"),
      },
      (c) => settings.getKeyThresholds(readPathId(c)),
    ),
    route(
      {
        method: "PATCH",
        path: "/keys/{id}/alert-thresholds",
        summary: "Set a key's budget-alert thresholds",
        request: { params: idParams, body: keyThresholdsBody },
        responses: answer("The thresholds as stored"),
      },
      async (c) =>
        settings.setKeyThresholds(readPathId(c), (await readAdminBody(c, keyThresholdsBody)).thresholds),
    ),
    route(
      {
        method: "GET",
        path: "/workspaces/{id}/alert-webhook",
        summary: "A workspace's budget-alert webhook (without its secret)",
        request: { params: idParams },
        responses: answer("The webhook, or null"),
      },
      (c) => settings.getWebhook(readPathId(c)),
    ),
    route(
      {
        method: "PATCH",
        path: "/workspaces/{id}/alert-webhook",
        summary:
          "Set (or with url null remove) a workspace's budget-alert webhook; answers a new signing secret, shown once",
        request: { params: idParams, body: webhookBody },
        responses: answer("The webhook and its secret"),
      },
      async (c) => {
        const body = await readAdminBody(c, webhookBody);
        return body.url === null
          ? settings.removeWebhook(readPathId(c))
          : settings.setWebhook(readPathId(c), body);
      },
    ),
    route(
      {
        method: "GET",
        path: "/workspaces/{id}/alert-deliveries",
        summary: "A workspace's budget-alert delivery attempts, newest first",
        request: {
          params: idParams,
          query: z.object({
            limit: z
              .int()
              .min(1)
              .max(DELIVERY_LIST_LIMIT.max)
              .optional()
              .meta({
                description: `default ${DELIVERY_LIST_LIMIT.default}`,
              }),
          }),
        },
        responses: answer("Delivery attempts"),
      },
      (c) => {
        const text = c.req.query("limit");
        const limit = text === undefined || text === "" ? DELIVERY_LIST_LIMIT.default : Number(text);
        if (!/^\d*$/.test(text ?? "") || limit < 1 || limit > DELIVERY_LIST_LIMIT.max) {
          throw GatewayError.invalidRequest(
            `limit must be an integer from 1 to ${DELIVERY_LIST_LIMIT.max}`,
            "limit",
          );
        }
        return settings.listDeliveries(readPathId(c), limit);
      },
    ),
  ];
}
