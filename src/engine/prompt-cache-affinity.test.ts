import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalRequest } from "../canonical/index.js";
import type { CatalogModel } from "../catalog/types.js";
import { findCacheAffinity, orderByAffinity, PREFIX_CHARS } from "./prompt-cache-affinity.js";
import type { RouteCandidate } from "./route-candidates.js";

function request(text: string, overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  const base: CanonicalRequest = {
    model: "m",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
  };
  return Object.assign(base, overrides);
}

function candidates(model: CatalogModel, count: number, prefix = "p"): RouteCandidate[] {
  return Array.from({ length: count }, (_, index) => ({
    model,
    route: { provider: { id: `${prefix}${index}` } as never, upstreamModel: `u${index}` },
    key: `${prefix}${index}/u${index}`,
  }));
}

test("a short prompt has no affinity; a long one, a breakpoint or a cache key has one", () => {
  assert.equal(findCacheAffinity(request("hello")), undefined);
  assert.match(findCacheAffinity(request("x".repeat(PREFIX_CHARS)))!, /^prefix:/);
  const marked = request("hello");
  marked.system = [{ type: "text", text: "sys", cacheControl: { type: "ephemeral" } }];
  assert.match(findCacheAffinity(marked)!, /^prefix:/);
  assert.equal(findCacheAffinity(request("hello", { passthrough: { prompt_cache_key: "k" } })), "key:k");
});

test("the prefix hash reads only the first PREFIX_CHARS: what follows does not change it", () => {
  const long = "y".repeat(PREFIX_CHARS);
  const a = request(long);
  const b = request(long);
  b.messages.push({ role: "user", content: [{ type: "text", text: "a later turn" }] });
  assert.equal(findCacheAffinity(a), findCacheAffinity(b));
  assert.notEqual(findCacheAffinity(request(`z${long}`)), findCacheAffinity(a));
});

test("rendezvous order: one order per affinity, spread over routes, alternatives kept after", () => {
  const model = { slug: "m" } as CatalogModel;
  const alternative = { slug: "alt" } as CatalogModel;
  const routes = [...candidates(model, 3), ...candidates(alternative, 1, "alt")];
  const firsts = new Set<string>();
  for (let index = 0; index < 60; index++) {
    const order = orderByAffinity(routes, `key:${index}`);
    assert.deepEqual(order, orderByAffinity(routes, `key:${index}`), "the same order every time");
    assert.equal(order[3].key, "alt0/u0", "the alternative stays last");
    firsts.add(order[0].key);
  }
  assert.equal(firsts.size, 3, "every route is somebody's first");
  // Removing a route moves only the affinities that had it first.
  for (let index = 0; index < 60; index++) {
    const full = orderByAffinity(routes, `key:${index}`);
    const without = orderByAffinity(
      routes.filter((route) => route.key !== "p2/u2"),
      `key:${index}`,
    );
    if (full[0].key !== "p2/u2") assert.equal(without[0].key, full[0].key);
    else assert.equal(without[0].key, full[1].key, "the fallback is the next in the same order");
  }
});
