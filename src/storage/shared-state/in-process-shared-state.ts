/** Embedded mode's SharedState: one process, so pub/sub is an EventEmitter. */
import { EventEmitter } from "node:events";
import type { SharedState } from "../store.js";

export function createInProcessSharedState(): SharedState {
  const emitter = new EventEmitter();
  // Every cache in the process may subscribe to the same channel; there is no leak to warn about.
  emitter.setMaxListeners(0);
  let closed = false;
  const values = new Map<string, { value: string; expiresAt: number }>();
  /** Sorted sets: index → key → score. */
  const indexes = new Map<string, Map<string, number>>();
  let sets = 0;
  const indexOf = (index: string) => {
    let entries = indexes.get(index);
    if (!entries) {
      entries = new Map<string, number>();
      indexes.set(index, entries);
    }
    return entries;
  };

  const state: SharedState = {
    mode: "in-process",
    async ping() {
      if (closed) throw new Error("Shared state is closed");
    },
    async publish(channel, message) {
      if (closed) throw new Error("Shared state is closed");
      // Delivered on a later tick, like Redis: a publisher never runs subscribers inside its own call.
      setImmediate(() => emitter.emit(channel, message));
    },
    async setValue(key, value, ttlMs) {
      if (closed) throw new Error("Shared state is closed");
      // Expired values nobody reads again are swept now and then, so the map stays bounded.
      if (++sets % 1024 === 0) {
        const now = Date.now();
        for (const [each, entry] of values) if (entry.expiresAt <= now) values.delete(each);
      }
      values.set(key, { value, expiresAt: Date.now() + ttlMs });
    },
    async extendObjectValue(key, members) {
      if (closed) throw new Error("Shared state is closed");
      const entry = values.get(key);
      if (entry === undefined || entry.expiresAt <= Date.now() || !entry.value.endsWith("}")) return;
      entry.value = `${entry.value.slice(0, -1)},${members}}`;
    },
    async getValue(key) {
      if (closed) throw new Error("Shared state is closed");
      const entry = values.get(key);
      if (entry === undefined) return null;
      if (entry.expiresAt > Date.now()) return entry.value;
      values.delete(key);
      return null;
    },
    async deleteValue(key) {
      if (closed) throw new Error("Shared state is closed");
      values.delete(key);
    },
    async setIndexedValue(names, key, value, score, ttlMs) {
      await state.setValue(key, value, ttlMs);
      for (const index of names) indexOf(index).set(key, score);
    },
    async listIndexedValues(index, maxScore, limit) {
      if (closed) throw new Error("Shared state is closed");
      const due = [...(indexes.get(index) ?? [])]
        .filter(([, score]) => score <= maxScore)
        .sort((a, b) => a[1] - b[1])
        .slice(0, limit);
      return Promise.all(due.map(async ([key]) => ({ key, value: await state.getValue(key) })));
    },
    async deleteIndexedValue(names, key) {
      await state.deleteValue(key);
      for (const index of names) indexes.get(index)?.delete(key);
    },
    async touchMember(index, member) {
      if (closed) throw new Error("Shared state is closed");
      const entries = indexOf(index);
      const wasListed = entries.has(member);
      const nowMs = Date.now();
      entries.set(member, nowMs);
      return { nowMs, wasListed };
    },
    async listMembers(index) {
      if (closed) throw new Error("Shared state is closed");
      return [...(indexes.get(index) ?? [])].map(([member, score]) => ({ member, score }));
    },
    async removeMember(index, member) {
      indexes.get(index)?.delete(member);
    },
    async subscribe(channel, onMessage) {
      if (closed) throw new Error("Shared state is closed");
      const listener = (message: string) => {
        try {
          onMessage(message);
        } catch {
          // A failing subscriber must not stop delivery to the others.
        }
      };
      emitter.on(channel, listener);
      return async () => {
        emitter.off(channel, listener);
      };
    },
    async close() {
      closed = true;
      emitter.removeAllListeners();
      values.clear();
      indexes.clear();
    },
  };
  return state;
}
