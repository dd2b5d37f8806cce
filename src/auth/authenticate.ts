/**
 * Resolves the caller's API key to its state: the key record (status, allowlist), its workspace
 * (lock, balance) and its limits. This is the one per-instance cache of key state: admission reads
 * the caller it returns and nothing else, so authentication and admission can never disagree about
 * a key. Lookups are cached for a few seconds; a change announced on `gateway:key-changed` (a key,
 * or every key of a workspace) or `gateway:balance-changed` (credit added or removed), by the admin
 * service on any instance, evicts the entries everywhere at once, and the TTL bounds staleness if a
 * message is lost (at most 30 s). Balance and spend are not trusted from here: the limit counters
 * hold them exactly; the cached balance only gives the early "no credit left" answer. One-time
 * playground keys (source other than `api`) are consumed here, in the database, on every use: the
 * cache never lets one through twice.
 */
import { GatewayError } from "../errors/gateway-error.js";
import type { ApiKeyWithWorkspace, KeyLimits } from "./accounts.js";
import { hashApiKey, isWellFormedApiKey } from "./api-key.js";
import { BALANCE_CHANGED_CHANNEL } from "./balance-channel.js";
import type { Announcements, AuthStore } from "./ports.js";

export const KEY_CHANGED_CHANNEL = "gateway:key-changed";
/** Bounds how long a disabled or revoked key can still pass on an instance that missed the message. */
export const DEFAULT_CACHE_TTL_MS = 5_000;
const MAX_CACHE_ENTRIES = 10_000;

/** A key's whole state as of the last announced change. */
export interface AuthenticatedCaller extends ApiKeyWithWorkspace {
  limits: KeyLimits;
}

interface CacheEntry {
  value: AuthenticatedCaller | null;
  expiresAt: number;
}

export interface Authenticator {
  /** Throws `invalid_api_key` for a missing, malformed, unknown, disabled, revoked or expired key. */
  authenticate(secret: string | undefined): Promise<AuthenticatedCaller>;
  /** Drops cached state for a key id (or everything). */
  evict(keyId?: string): void;
  /** Applies an announcement from `gateway:key-changed` or `gateway:balance-changed`. */
  evictFor(channel: string, message: string): void;
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
  function evictTarget(target: { keyId?: string; workspaceId?: string }): void {
    evictions++;
    if (target.keyId !== undefined) {
      for (const [hash, entry] of cache) if (entry.value?.key.id === target.keyId) cache.delete(hash);
      return;
    }
    if (target.workspaceId === undefined) {
      cache.clear();
      return;
    }
    for (const [hash, entry] of cache) {
      if (entry.value === null || entry.value.workspace.id === target.workspaceId) cache.delete(hash);
    }
  }
  const evict = (keyId?: string) => evictTarget(keyId === undefined ? {} : { keyId });
  function evictFor(channel: string, message: string): void {
    if (channel !== KEY_CHANGED_CHANNEL && channel !== BALANCE_CHANGED_CHANNEL) return;
    evictTarget(readTarget(message));
  }
  const unsubscribers = await Promise.all(
    [KEY_CHANGED_CHANNEL, BALANCE_CHANGED_CHANNEL].map((channel) =>
      state.subscribe(channel, (message) => evictFor(channel, message)),
    ),
  );

  /** The key with its workspace and limits; two reads on a miss, none on a hit. */
  async function readCaller(hash: string): Promise<AuthenticatedCaller | null> {
    const found = await store.apiKeys.findByHash(hash);
    if (!found) return null;
    const admission = await store.keyLimits.readAdmission(found.key.id);
    if (!admission) return null;
    return { key: found.key, workspace: admission.workspace, limits: admission.limits };
  }

  async function lookup(hash: string): Promise<AuthenticatedCaller | null> {
    const now = Date.now();
    const cached = cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.value;
    const evictionsBefore = evictions;
    const value = await readCaller(hash);
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
    evictFor,
    async close() {
      for (const unsubscribe of unsubscribers) await unsubscribe();
    },
  };
}

/** Everything, when the message names neither a key nor a workspace. */
function readTarget(message: string): { keyId?: string; workspaceId?: string } {
  try {
    const { keyId, workspaceId } = JSON.parse(message) as { keyId?: unknown; workspaceId?: unknown };
    if (typeof keyId === "string") return { keyId };
    if (typeof workspaceId === "string") return { workspaceId };
  } catch {
    // Not ours: treat as "everything may have changed".
  }
  return {};
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
