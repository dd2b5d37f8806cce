/**
 * Resolves the caller's API key to its record and workspace. Lookups are cached for a few seconds
 * per instance; a key change published on `gateway:key-changed` (by the admin service on any
 * instance) evicts the entry everywhere at once, and the TTL bounds staleness if a message is lost
 * (a key change must apply everywhere within 30 s). One-time playground keys (source other than
 * `api`) are consumed here, in the database, on every use: the cache never lets one through twice.
 */
import { GatewayError } from "../errors/gateway-error.js";
import type { ApiKeyWithWorkspace } from "./accounts.js";
import { hashApiKey, isWellFormedApiKey } from "./api-key.js";
import type { Announcements, AuthStore } from "./ports.js";

export const KEY_CHANGED_CHANNEL = "gateway:key-changed";
/** Bounds how long a disabled or revoked key can still pass on an instance that missed the message. */
export const DEFAULT_CACHE_TTL_MS = 5_000;
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

export interface AuthenticatorOptions {
  /** At most 30 s; default 5 s. */
  cacheTtlMs?: number;
}

export async function createAuthenticator(
  store: AuthStore,
  state: Announcements,
  options: AuthenticatorOptions = {},
): Promise<Authenticator> {
  const cacheTtlMs = Math.min(options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS, 30_000);
  const cache = new Map<string, CacheEntry>();
  // Bumped by every eviction: a lookup that was already reading the database when a key changed
  // may have read the old row, so it must not put that row into the cache.
  let evictions = 0;
  const evict = (keyId?: string) => {
    evictions++;
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
    const evictionsBefore = evictions;
    const value = await store.apiKeys.findByHash(hash);
    if (evictions !== evictionsBefore) return value;
    if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
    cache.set(hash, { value, expiresAt: now + cacheTtlMs });
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
      // One-time key: the database decides, atomically across instances, which request gets it.
      if (key.source !== "api" && !(await store.playgroundKeys.consume(key.id))) {
        throw new GatewayError("invalid_api_key", "API key has expired or was already used");
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

/**
 * The key of `Authorization: Bearer`, else of Anthropic's `x-api-key` header: what the messages
 * endpoints and the generation lookup accept (Anthropic SDK users hold their key in `x-api-key`).
 */
export function readBearerOrApiKey(headers: { get(name: string): string | null }): string | undefined {
  return readBearerToken(headers.get("authorization") ?? undefined) ?? headers.get("x-api-key") ?? undefined;
}
