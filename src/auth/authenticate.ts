/**
 * Resolves the caller's API key to its record and workspace. Lookups are cached for a few seconds
 * per instance; a key change published on `gateway:key-changed` (by the admin service on any
 * instance) evicts the entry everywhere at once, and the TTL bounds staleness if a message is lost
 * (spec §5.6: at most 30 s).
 */
import { GatewayError } from "../errors/gateway-error.js";
import type { ApiKeyWithWorkspace, SharedState, Store } from "../storage/types.js";
import { hashApiKey, isWellFormedApiKey } from "./api-key.js";

export const KEY_CHANGED_CHANNEL = "gateway:key-changed";
const CACHE_TTL_MS = 5_000;
const MAX_CACHE_ENTRIES = 10_000;

interface CacheEntry {
  value: ApiKeyWithWorkspace | null;
  expiresAt: number;
}

export interface Authenticator {
  /** Throws `invalid_api_key` for a missing, malformed, unknown, disabled, revoked or expired key. */
  authenticate(secret: string | undefined): Promise<ApiKeyWithWorkspace>;
  /** Drops cached state for a key id (or everything). */
  evict(keyId?: string): void;
  close(): Promise<void>;
}

export async function createAuthenticator(store: Store, state: SharedState): Promise<Authenticator> {
  const cache = new Map<string, CacheEntry>();
  const evict = (keyId?: string) => {
    if (keyId === undefined) return cache.clear();
    for (const [hash, entry] of cache) if (entry.value?.key.id === keyId) cache.delete(hash);
  };
  const unsubscribe = await state.subscribe(KEY_CHANGED_CHANNEL, (message) => {
    try {
      evict((JSON.parse(message) as { keyId?: string }).keyId);
    } catch {
      evict();
    }
  });

  async function lookup(hash: string): Promise<ApiKeyWithWorkspace | null> {
    const now = Date.now();
    const cached = cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.value;
    const value = await store.apiKeys.findByHash(hash);
    if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
    cache.set(hash, { value, expiresAt: now + CACHE_TTL_MS });
    return value;
  }

  return {
    async authenticate(secret) {
      if (!secret)
        throw new GatewayError("invalid_api_key", "Missing API key: send Authorization: Bearer hi-…");
      if (!isWellFormedApiKey(secret)) throw new GatewayError("invalid_api_key", "Malformed API key");
      const found = await lookup(hashApiKey(secret));
      if (!found) throw new GatewayError("invalid_api_key", "Unknown API key");
      const { key } = found;
      if (key.status !== "active") throw new GatewayError("invalid_api_key", `API key is ${key.status}`);
      if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) {
        throw new GatewayError("invalid_api_key", "API key has expired");
      }
      return found;
    },
    evict,
    close: unsubscribe,
  };
}

/** `Authorization: Bearer <key>`; the messages format also accepts `x-api-key`. */
export function readBearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : "";
}
