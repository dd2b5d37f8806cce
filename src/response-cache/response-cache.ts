/**
 * The exact response cache (docs/response-cache.md), as the engine uses it (`AnswerCache` of
 * engine/ports.ts): which requests are cached and for how long, their keys, and the entries in
 * the store its caller gives it. A store that fails or is slow never fails a request: the lookup
 * is a miss after READ_DEADLINE_MS and a failed write is logged.
 */
import type { CanonicalRequest, CanonicalResult } from "../canonical/index.js";
import type { AnswerCache, CacheTicket } from "../engine/ports.js";
import type { Logger } from "../logging/logger.js";
import { computeCacheKey } from "./cache-key.js";
import type { ResponseCacheStore } from "./ports.js";

/** How long a lookup may take before the request goes on as a miss. */
export const READ_DEADLINE_MS = 250;
/** How long a write may take before it is given up (it runs after the answer, off its path). */
const WRITE_DEADLINE_MS = 2_000;

export interface ResponseCacheOptions {
  store: ResponseCacheStore;
  logger: Logger;
  /** An entry larger than this (its JSON) is not stored. */
  maxEntryBytes: number;
  /** The longest time-to-live any request or policy gets. */
  maxTtlSeconds: number;
}

/** The version of the stored entry's shape: entries of another version are misses. */
const ENTRY_VERSION = 1;

export function createResponseCache(options: ResponseCacheOptions): AnswerCache {
  const { store, logger, maxEntryBytes, maxTtlSeconds } = options;
  return {
    maxEntryBytes,
    ticketFor(request, workspaceId, policyTtlSeconds) {
      const ttl = chooseTtl(request, policyTtlSeconds);
      if (ttl === undefined) return undefined;
      return {
        key: `response-cache:${workspaceId}:${computeCacheKey(workspaceId, request)}`,
        ttlSeconds: Math.min(ttl, maxTtlSeconds),
      };
    },
    async read(ticket: CacheTicket): Promise<CanonicalResult | undefined> {
      let text: string | undefined;
      try {
        text = await withDeadline(store.get(ticket.key), READ_DEADLINE_MS);
      } catch (error) {
        logger.warn({ err: error }, "response cache lookup failed; answered as a miss");
        return undefined;
      }
      if (text === undefined) return undefined;
      try {
        const entry = JSON.parse(text) as { v?: number; result?: CanonicalResult };
        return entry.v === ENTRY_VERSION && entry.result !== undefined ? entry.result : undefined;
      } catch {
        return undefined;
      }
    },
    async write(ticket: CacheTicket, result: CanonicalResult): Promise<void> {
      const text = JSON.stringify({ v: ENTRY_VERSION, result });
      if (Buffer.byteLength(text) > maxEntryBytes) return;
      try {
        await withDeadline(store.set(ticket.key, text, ticket.ttlSeconds), WRITE_DEADLINE_MS);
      } catch (error) {
        logger.warn({ err: error }, "response cache write failed");
      }
    },
  };
}

/**
 * The request's own choice wins (0: not this one); a key's or workspace's policy covers only
 * requests whose answer is meant to repeat: temperature 0 set explicitly, and no server tools
 * (their results change with the world). A caller who asks explicitly gets any request cached.
 */
function chooseTtl(request: CanonicalRequest, policyTtlSeconds: number | null): number | undefined {
  const own = request.responseCacheTtlSeconds;
  if (own !== undefined) return own > 0 ? own : undefined;
  if (policyTtlSeconds === null || policyTtlSeconds <= 0) return undefined;
  if (request.sampling.temperature !== 0 || request.serverTools.length > 0) return undefined;
  return policyTtlSeconds;
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`response cache store did not answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
