/** Request headers for OpenAI-style upstreams (Chat Completions and Responses alike). */
import type { UpstreamCall } from "../provider-adapter.js";

/**
 * Header names are lowercased so a configured header replaces a default instead of travelling
 * next to it. Provider headers may override auth (e.g. an `api-key` host) but not the request id.
 */
export function buildUpstreamHeaders(
  call: UpstreamCall,
  options: { stream: boolean },
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: options.stream ? "text/event-stream" : "application/json",
  };
  if (call.provider.apiKey !== undefined && call.provider.apiKey !== "") {
    headers.authorization = `Bearer ${call.provider.apiKey}`;
  }
  for (const [name, value] of Object.entries(call.provider.headers)) headers[name.toLowerCase()] = value;
  headers["x-request-id"] = call.requestId;
  headers["x-gateway-request-id"] = call.requestId;
  return headers;
}
