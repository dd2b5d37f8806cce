/**
 * How a failure while talking to an upstream is reported: the caller's abort reason when it
 * aborted, else the network error (undici or node:net) mapped to the error catalog. Shared by the
 * streamed and the whole-body paths of the HTTP client and by the adapters.
 */
import { GatewayError } from "../../errors/gateway-error.js";

/**
 * What to throw for an error raised while talking to an upstream: the abort reason when the
 * caller aborted, a GatewayError as is, else the classified network failure.
 */
export function toUpstreamFailure(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  return mapNetworkError(error);
}

/** Network error codes (undici, node:net, DNS) → the taxonomy's code and the message callers see. */
const NETWORK_FAILURES = new Map<string, readonly [GatewayError["code"], string]>(
  Object.entries({
    UND_ERR_CONNECT_TIMEOUT: ["provider_timeout", "Timed out connecting to the upstream provider"],
    ETIMEDOUT: ["provider_timeout", "Timed out connecting to the upstream provider"],
    UND_ERR_HEADERS_TIMEOUT: ["provider_timeout", "The upstream provider did not start answering in time"],
    UND_ERR_BODY_TIMEOUT: ["provider_timeout", "The upstream provider stopped sending data"],
    ECONNREFUSED: ["provider_unavailable", "The upstream provider refused the connection"],
    ENOTFOUND: ["provider_unavailable", "The upstream provider's host name did not resolve"],
    EAI_AGAIN: ["provider_unavailable", "The upstream provider's host name did not resolve"],
    ECONNRESET: ["provider_unavailable", "The upstream provider closed the connection"],
    EPIPE: ["provider_unavailable", "The upstream provider closed the connection"],
    UND_ERR_SOCKET: ["provider_unavailable", "The upstream provider closed the connection"],
    UND_ERR_CLOSED: ["provider_unavailable", "The upstream provider closed the connection"],
    UND_ERR_DESTROYED: ["provider_unavailable", "The upstream provider closed the connection"],
  } satisfies Record<string, readonly [GatewayError["code"], string]>),
);

/** Maps a network-level failure (undici or node:net error) to the error catalog. */
export function mapNetworkError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = findErrorCode(error);
  const known = code === undefined ? undefined : NETWORK_FAILURES.get(code);
  const [gatewayCode, message] = known ?? ["provider_unavailable", "The upstream request failed"];
  return new GatewayError(gatewayCode, message, { cause: error });
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
