import type { AdmittedCaller } from "./ports.js";

/**
 * The caller's response-cache policy in seconds (docs/response-cache.md): the key's own, else its
 * workspace's; null when neither caches.
 */
export function readCachePolicy(caller: AdmittedCaller): number | null {
  return caller.key.responseCacheTtlSeconds ?? caller.workspace.responseCacheTtlSeconds ?? null;
}
