/**
 * The response cache's store in embedded mode: in this process, bounded by the bytes of its
 * entries (keys and values, counted as UTF-16 code units × 2, what they hold in memory). A new entry
 * evicts the least recently used ones until it fits; an expired one is dropped when read.
 */
import type { ResponseCacheStore } from "../../response-cache/ports.js";

interface Entry {
  value: string;
  expiresAt: number;
  bytes: number;
}

export function createMemoryResponseCacheStore(
  maxBytes: number,
  now: () => number = Date.now,
): ResponseCacheStore & { readonly bytes: number; readonly size: number } {
  // A Map iterates in insertion order: re-inserting on each read keeps the least recent first.
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= entry.bytes;
  };
  return {
    get bytes() {
      return bytes;
    },
    get size() {
      return entries.size;
    },
    async get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      remove(key, entry);
      if (entry.expiresAt <= now()) return undefined;
      entries.set(key, entry);
      bytes += entry.bytes;
      return entry.value;
    },
    async set(key, value, ttlSeconds) {
      const size = (key.length + value.length) * 2;
      const previous = entries.get(key);
      if (previous !== undefined) remove(key, previous);
      if (size > maxBytes) return;
      for (const [oldest, entry] of entries) {
        if (bytes + size <= maxBytes) break;
        remove(oldest, entry);
      }
      entries.set(key, { value, expiresAt: now() + ttlSeconds * 1000, bytes: size });
      bytes += size;
    },
  };
}
