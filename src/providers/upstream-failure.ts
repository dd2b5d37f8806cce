/**
 * How a failure while talking to an upstream is reported: the caller's abort reason when it
 * aborted, else the network error (undici or node:net) mapped to the spec's taxonomy. Shared by the
 * streamed and the whole-body paths of the HTTP client and by the adapters.
 */
import { GatewayError } from "../errors/gateway-error.js";

/**
 * What to throw for an error raised while talking to an upstream: the abort reason when the
 * caller aborted, a GatewayError as is, else the classified network failure.
 */
export function toUpstreamFailure(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  return mapNetworkError(error);
}

/** Maps a network-level failure (undici or node:net error) to the spec's taxonomy. */
export function mapNetworkError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = findErrorCode(error);
  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return new GatewayError("provider_timeout", "Timed out connecting to the upstream provider", {
        cause: error,
      });
    case "UND_ERR_HEADERS_TIMEOUT":
      return new GatewayError("provider_timeout", "The upstream provider did not start answering in time", {
        cause: error,
      });
    case "UND_ERR_BODY_TIMEOUT":
      return new GatewayError("provider_timeout", "The upstream provider stopped sending data", {
        cause: error,
      });
    case "ECONNREFUSED":
      return new GatewayError("provider_unavailable", "The upstream provider refused the connection", {
        cause: error,
      });
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new GatewayError("provider_unavailable", "The upstream provider's host name did not resolve", {
        cause: error,
      });
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
    case "UND_ERR_CLOSED":
    case "UND_ERR_DESTROYED":
      return new GatewayError("provider_unavailable", "The upstream provider closed the connection", {
        cause: error,
      });
    default:
      return new GatewayError("provider_unavailable", "The upstream request failed", { cause: error });
  }
}

/** The first error code found on the error, its causes, or an AggregateError's members. */
function findErrorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== "object" || error === null || depth > 4) return undefined;
  const candidate = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof candidate.code === "string") return candidate.code;
  if (Array.isArray(candidate.errors)) {
    for (const member of candidate.errors) {
      const code = findErrorCode(member, depth + 1);
      if (code !== undefined) return code;
    }
  }
  return findErrorCode(candidate.cause, depth + 1);
}
