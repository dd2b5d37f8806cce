/**
 * `POST /api/v1/playground-keys`: the platform application mints a
 * one-time key for a signed-in user. Only a caller holding INTERNAL_SHARED_SECRET (sent as
 * `X-Internal-Token`) may call it; without a configured secret the route does not exist (404,
 * the same answer as any unknown path). Requests carrying an API key are refused even with a
 * valid token, so an API-key caller can never reach it by accident or design. Errors use the
 * common envelope.
 */
import { z } from "zod";
import { isStorableText, STORABLE_TEXT_RULE } from "../../admin/storable-text.js";
import { isInternalTokenValid } from "../../auth/internal-token.js";
import { mintPlaygroundKey } from "../../auth/mint-playground-key.js";
import type { PlaygroundKeyPolicy } from "../../auth/playground-key-policy.js";
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { formatParam } from "../../ingress/shared/describe-validation-issue.js";
import type { Store } from "../../storage/store.js";
import { readJsonBody } from "../json/read-json-body.js";
import { COMMON_ERRORS, INTERNAL_TOKEN, jsonResponse } from "../openapi/route-responses.js";
import { classifyCaught, createErrorResponse } from "../router/error-response.js";
import type { RouteDefinition } from "../router/route-definition.js";

export const PLAYGROUND_KEYS_PATH = "/api/v1/playground-keys";
const MAX_BODY_BYTES = 16 * 1024;
const MAX_ID_LENGTH = 200;

// Refused here, not as a failed statement (storable-text.ts).
const idSchema = (description: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(MAX_ID_LENGTH)
    .refine(isStorableText, STORABLE_TEXT_RULE)
    .meta({ description });

/** Validates the body and documents it in /openapi.json. */
export const playgroundKeyRequestSchema = z
  .strictObject({
    workspace_id: idSchema("The workspace the key's calls are billed to"),
    user_id: idSchema("The signed-in platform user the key is minted for (rate-limited per user)"),
    source: z
      .enum(["playground", "chat"])
      .default("playground")
      .meta({ description: "Label of the key's calls in usage records" }),
  })
  .meta({ id: "PlaygroundKeyRequest" });

export const playgroundKeyResponseSchema = z
  .object({
    key: z.string().meta({ description: "Key material (hi-…), shown once; valid for one request" }),
    expires_at: z.string().meta({ format: "date-time", description: "10 minutes after minting" }),
    source: z.enum(["playground", "chat"]),
  })
  .meta({ id: "PlaygroundKey" });

export interface PlaygroundKeysRouteDeps {
  store: Store;
  /** INTERNAL_SHARED_SECRET; undefined disables the endpoint. */
  internalSharedSecret: string | undefined;
  policy: PlaygroundKeyPolicy;
}

export function createPlaygroundKeysRoute(deps: PlaygroundKeysRouteDeps): RouteDefinition {
  return {
    method: "POST",
    path: PLAYGROUND_KEYS_PATH,
    summary: "Mint a one-time playground key (internal: platform application only)",
    description:
      "Authenticated by X-Internal-Token (INTERNAL_SHARED_SECRET); API keys are refused. The key admits " +
      "exactly one request, expires 10 minutes after minting and is then purged. Minting is limited " +
      "per user_id (rate_limit_exceeded with Retry-After). Without a configured secret the endpoint answers 404.",
    security: INTERNAL_TOKEN,
    request: { body: playgroundKeyRequestSchema },
    responses: { 201: jsonResponse(playgroundKeyResponseSchema, "The minted key"), ...COMMON_ERRORS },
    handler: async (c) => {
      const requestId = c.requestId;
      const fail = (error: GatewayError, status?: number) => {
        const response = createErrorResponse(error, createCommonErrorEnvelope(error, requestId), requestId);
        return status === undefined
          ? response
          : new Response(response.body, { status, headers: response.headers });
      };
      if (!deps.internalSharedSecret) {
        return fail(GatewayError.invalidRequest(`No route for POST ${PLAYGROUND_KEYS_PATH}`, null), 404);
      }
      try {
        // Checked before anything else is read: nothing below runs for an unauthenticated caller.
        const tokenValid = isInternalTokenValid(c.req.header("x-internal-token"), deps.internalSharedSecret);
        if (c.req.header("authorization") !== undefined || c.req.header("x-api-key") !== undefined) {
          throw new GatewayError(
            "invalid_api_key",
            "API keys cannot mint playground keys; only the platform application's X-Internal-Token can",
          );
        }
        if (!tokenValid) throw new GatewayError("invalid_api_key", "Missing or wrong X-Internal-Token");
        const body = readRequest(await readJsonBody(c.req.raw, MAX_BODY_BYTES));
        const minted = await mintPlaygroundKey(deps.store, deps.policy, {
          workspaceId: body.workspace_id,
          userId: body.user_id,
          source: body.source,
        });
        c.header("Cache-Control", "no-store");
        return c.json(
          { key: minted.secret, expires_at: minted.expiresAt.toISOString(), source: minted.source },
          201,
        );
      } catch (thrown) {
        return fail(classifyCaught(thrown, requestId, c.logger));
      }
    },
  };
}

function readRequest(body: unknown): z.output<typeof playgroundKeyRequestSchema> {
  const parsed = playgroundKeyRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
  const param = unknownKey ?? formatParam(issue.path);
  const message =
    unknownKey !== undefined
      ? `Unknown field "${unknownKey}"; the body takes workspace_id, user_id and source`
      : param
        ? `${param}: ${issue.message}`
        : "The body must be a JSON object with workspace_id, user_id and source";
  throw GatewayError.invalidRequest(message, param);
}
