/**
 * Gemini answers a bad or expired API key with HTTP 400 INVALID_ARGUMENT ("API key not valid.
 * Please pass a valid API key.", ErrorInfo reason API_KEY_INVALID), not 401/403. The shared
 * classifier reads 400 as the caller's `invalid_request`; it is the gateway's credential, so it
 * becomes `provider_auth`. (Proposed for `classify-upstream-error.ts`, which would make this a no-op.)
 */
import { GatewayError } from "../../errors/gateway-error.js";

const API_KEY_MESSAGE = /\bAPI key (?:not valid|expired|invalid)|API_KEY_INVALID/i;

export function refineGoogleError(error: unknown): unknown {
  if (
    !(error instanceof GatewayError) ||
    error.code !== "invalid_request" ||
    !API_KEY_MESSAGE.test(error.message)
  ) {
    return error;
  }
  return new GatewayError("provider_auth", "The upstream provider rejected the gateway's credentials", {
    upstreamStatus: error.upstreamStatus,
    cause: error,
  });
}
