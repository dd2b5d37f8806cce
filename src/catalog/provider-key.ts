import type { ProviderConfig } from "./types.js";

/**
 * The provider names an API key variable that was unset when the gateway started: its routes
 * cannot be called (the engine skips them, the start banner lists them).
 */
export function isMissingProviderKey(provider: ProviderConfig): boolean {
  return provider.apiKeyEnv !== undefined && provider.apiKey === undefined;
}
