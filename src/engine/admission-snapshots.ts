/**
 * What admission needs of a key — its limits, allowlist and workspace — cached per instance, so a
 * request costs no database read (docs/decisions/0035-settlement-group-commit.md). Freshness comes from the same announcements
 * that keep the authenticator's cache fresh: `gateway:key-changed` (a key, or every key of a
 * workspace, changed) and `gateway:balance-changed` (credit added or removed). The instance making a
 * change evicts before it publishes (auth/evict-before-publish.ts), so the change applies to its very
 * next request; other instances within a pub/sub message, and within the TTL if one is lost.
 *
 * Balance and spend are not trusted from here: the limit counters hold them exactly (SpendGuard).
 * The cached balance only gives the early "no credit left" answer.
 */
import { KEY_CHANGED_CHANNEL } from "../auth/authenticate.js";
import type { Announcements } from "../auth/ports.js";
import { BALANCE_CHANGED_CHANNEL } from "../limits/balance-channel.js";
import type { AdmissionSnapshot, KeyLimitRepository } from "../limits/ports.js";

export const DEFAULT_ADMISSION_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export interface AdmissionSnapshots {
  read(keyId: string): Promise<AdmissionSnapshot | null>;
  /** Applies an announcement from `gateway:key-changed` or `gateway:balance-changed`. */
  evictFor(channel: string, message: string): void;
  close(): Promise<void>;
}

interface Entry {
  value: AdmissionSnapshot | null;
  expiresAt: number;
}

export async function createAdmissionSnapshots(
  keyLimits: Pick<KeyLimitRepository, "readAdmission">,
  state: Announcements,
  options: { ttlMs?: number } = {},
): Promise<AdmissionSnapshots> {
  const ttlMs = Math.min(options.ttlMs ?? DEFAULT_ADMISSION_CACHE_TTL_MS, 30_000);
  const cache = new Map<string, Entry>();
  // A read in flight while something changed may carry the old row: it must not be cached.
  let evictions = 0;

  function evict(target: { keyId?: string; workspaceId?: string }): void {
    evictions++;
    if (target.keyId !== undefined) {
      cache.delete(target.keyId);
      return;
    }
    if (target.workspaceId === undefined) {
      cache.clear();
      return;
    }
    for (const [keyId, entry] of cache) {
      if (entry.value === null || entry.value.workspace.id === target.workspaceId) cache.delete(keyId);
    }
  }

  function evictFor(channel: string, message: string): void {
    if (channel !== KEY_CHANGED_CHANNEL && channel !== BALANCE_CHANGED_CHANNEL) return;
    evict(readTarget(message));
  }

  const unsubscribers = await Promise.all(
    [KEY_CHANGED_CHANNEL, BALANCE_CHANGED_CHANNEL].map((channel) =>
      state.subscribe(channel, (message) => evictFor(channel, message)),
    ),
  );

  return {
    async read(keyId) {
      const now = Date.now();
      const cached = cache.get(keyId);
      if (cached && cached.expiresAt > now) return cached.value;
      const evictionsBefore = evictions;
      const value = await keyLimits.readAdmission(keyId);
      if (evictions !== evictionsBefore) return value;
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(keyId, { value, expiresAt: now + ttlMs });
      return value;
    },
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
