/**
 * The tools Anthropic runs itself (`request.nativeServerTools`) → its server tools:
 * `web_search_20250305` and `web_fetch_20250910` (the versions every current Claude model takes;
 * web_fetch also needs the `web-fetch-2025-09-10` beta). `max_uses` bounds the calls of one
 * request, as the engine asked; the domain lists are one or the other (the engine sends both only
 * to a provider that takes both); the location goes as given. A context size has no field here
 * and is left out.
 */
import type { NativeServerTool } from "../../canonical/index.js";
import type { AnthropicServerTool } from "./wire-types.js";

export const WEB_FETCH_BETA = "web-fetch-2025-09-10";

export function convertNativeTools(tools: readonly NativeServerTool[] | undefined): AnthropicServerTool[] {
  return (tools ?? []).map((tool) => {
    const converted: AnthropicServerTool = {
      type: tool.tool === "web_search" ? "web_search_20250305" : "web_fetch_20250910",
      name: tool.tool,
      max_uses: tool.maxUses,
    };
    if (tool.allowedDomains !== undefined && tool.allowedDomains.length > 0) {
      converted.allowed_domains = tool.allowedDomains;
    } else if (tool.blockedDomains !== undefined && tool.blockedDomains.length > 0) {
      converted.blocked_domains = tool.blockedDomains;
    }
    if (tool.tool === "web_search" && tool.userLocation !== undefined) {
      converted.user_location = { type: "approximate", ...tool.userLocation };
    }
    if (tool.tool === "web_fetch" && tool.maxContentTokens !== undefined) {
      converted.max_content_tokens = tool.maxContentTokens;
    }
    return converted;
  });
}

/** Whether the call needs the web fetch beta. */
export function needsWebFetchBeta(tools: readonly NativeServerTool[] | undefined): boolean {
  return (tools ?? []).some((tool) => tool.tool === "web_fetch");
}
