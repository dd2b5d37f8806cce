/**
 * The response cache's store for this gateway's mode: Redis when the shared state is (every
 * instance answers from the same entries, under REDIS_KEY_PREFIX, each with its time-to-live), else
 * the bounded in-process store.
 */
import type { ResponseCacheStore } from "../../response-cache/ports.js";
import type { SharedState } from "../store.js";
import { createMemoryResponseCacheStore } from "./memory-response-cache-store.js";

export function openResponseCacheStore(state: SharedState, memoryBytes: number): ResponseCacheStore {
  if (state.mode !== "redis") return createMemoryResponseCacheStore(memoryBytes);
  return {
    async get(key) {
      return (await state.getValue(key)) ?? undefined;
    },
    set(key, value, ttlSeconds) {
      return state.setValue(key, value, ttlSeconds * 1000);
    },
  };
}
