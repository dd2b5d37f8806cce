/**
 * What every route of the admin API (`/internal/admin/…`) shares: the X-Internal-Token check,
 * errors in the common envelope with the request id, and the readers of its path id, integer
 * query parameters and JSON bodies. One place, so the admin routes' files hold only their routes.
 */
import type { z } from "zod";
import { isInternalTokenValid } from "../../auth/internal-token.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { formatParam } from "../../ingress/shared/describe-validation-issue.js";
import { readJsonBody } from "../json/read-json-body.js";
import { INTERNAL_TOKEN } from "../openapi/route-responses.js";
import { classifyCaught, createErrorResponse } from "../router/error-response.js";
import type { RouteContext } from "../router/route-context.js";
import { ANSWERED, type RouteDefinition } from "../router/route-definition.js";

/** The admin API's JSON bodies are small: a workspace, a key, its limits. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024;

/** A route as its file writes it: the path below `/internal/admin`, GET unless it says otherwise. */
export type AdminRouteSpec = Omit<RouteDefinition, "handler" | "security" | "method"> & {
  method?: RouteDefinition["method"];
};

export interface AdminRouteOptions {
  /** The status of a JSON answer (default 200). */
  status?: 200 | 201;
  /** Answers carry `Cache-Control: no-store` (what the console reads must never be cached). */
  noStore?: boolean;
}

/**
 * `answer` returns the JSON body, a `Response` it built, or ANSWERED when it wrote the Node
 * response itself (a streamed export); an error after that cuts the connection, the only honest
 * end of a half-written body.
 */
export type AdminAnswer = (c: RouteContext) => Promise<unknown>;

export type AdminRouteFactory = (
  spec: AdminRouteSpec,
  answer: AdminAnswer,
  options?: AdminRouteOptions,
) => RouteDefinition;

export function createAdminRouteFactory(internalSecret: string): AdminRouteFactory {
  return (spec, answer, options = {}) => ({
    method: spec.method ?? "GET",
    security: INTERNAL_TOKEN,
    ...spec,
    path: `/internal/admin${spec.path}`,
    handler: async (c) => {
      try {
        if (!isInternalTokenValid(c.req.header("x-internal-token"), internalSecret)) {
          throw new GatewayError("invalid_api_key", "Missing or wrong X-Internal-Token");
        }
        const result = await answer(c);
        if (result === ANSWERED || result instanceof Response) return result;
        if (options.noStore) c.header("Cache-Control", "no-store");
        return c.json(result, options.status ?? 200);
      } catch (thrown) {
        const error = classifyCaught(thrown, c.requestId, c.logger);
        if (c.outgoing.headersSent) {
          c.logger.warn({ err: thrown, requestId: c.requestId }, "admin answer ended early");
          c.outgoing.destroy();
          return ANSWERED;
        }
        return createErrorResponse(error, createCommonErrorEnvelope(error, c.requestId), c.requestId);
      }
    },
  });
}

/** The `{id}` of a route (every route that calls this has one). */
export function readPathId(c: RouteContext): string {
  return c.req.param("id") ?? "";
}

/** An optional integer query parameter within [min, max]; anything else is a clear 400. */
export function readIntegerQuery(
  c: RouteContext,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const text = c.req.query(name);
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw GatewayError.invalidRequest(`${name} must be an integer from ${min} to ${max}`, name);
  }
  return value;
}

/** The JSON body, checked by `schema`; the first problem is a 400 naming its field. */
export async function readAdminBody<T>(c: RouteContext, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await readJsonBody(c.req.raw, MAX_ADMIN_BODY_BYTES));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // An unknown field is reported at the object that holds it; name the field itself.
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]] : issue.path;
  const param = formatParam(path);
  const message = issue.code === "unrecognized_keys" ? "unknown field" : issue.message;
  throw GatewayError.invalidRequest(param ? `${param}: ${message}` : message, param);
}
