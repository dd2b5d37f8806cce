/** Response and security descriptions shared by the route table's entries. */
import type { ZodType } from "zod";
import type { ResponseDescription, SecurityRequirement } from "../router/route-definition.js";
import { commonErrorSchema, messagesErrorSchema } from "./openapi-schemas.js";

export const jsonResponse = (json: ZodType, description: string): ResponseDescription => ({
  description,
  json,
});

export const COMMON_ERRORS = {
  "4XX": jsonResponse(commonErrorSchema, "Error in the common envelope"),
  "5XX": jsonResponse(commonErrorSchema, "Error in the common envelope"),
};

export const MESSAGES_ERRORS = {
  "4XX": jsonResponse(messagesErrorSchema, "Error in the messages envelope"),
  "5XX": jsonResponse(messagesErrorSchema, "Error in the messages envelope"),
};

export const BEARER: readonly SecurityRequirement[] = [{ bearerKey: [] }];
/** Authorization: Bearer, or Anthropic's x-api-key. */
export const BEARER_OR_API_KEY: readonly SecurityRequirement[] = [{ bearerKey: [] }, { apiKeyHeader: [] }];
/** X-Internal-Token: the admin API and the platform application. */
export const INTERNAL_TOKEN: readonly SecurityRequirement[] = [{ internalToken: [] }];
