import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalRequest, CanonicalResult } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import { createLogger } from "../logging/logger.js";
import { createMemoryResponseCacheStore } from "../storage/response-cache/memory-response-cache-store.js";
import { computeCacheKey } from "./cache-key.js";
import { createResponseCache } from "./response-cache.js";

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  const base: CanonicalRequest = {
    model: "test/model",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
  };
  return Object.assign(base, overrides);
}

const RESULT: CanonicalResult = {
  content: [{ type: "text", text: "hello" }],
  finishReason: "stop",
  usage: createEmptyUsage(),
};

function cache(maxEntryBytes = 1_000_000) {
  return createResponseCache({
    store: createMemoryResponseCacheStore(10_000_000),
    logger: createLogger("silent"),
    maxEntryBytes,
    maxTtlSeconds: 3_600,
  });
}

test("a policy caches only deterministic requests; the request's own choice caches anything and can opt out", () => {
  const answers = cache();
  assert.equal(answers.ticketFor(request(), "ws", null), undefined, "no policy, no choice: not cached");
  assert.equal(answers.ticketFor(request(), "ws", 600), undefined, "temperature unset is not deterministic");
  assert.equal(answers.ticketFor(request({ sampling: { temperature: 0.7 } }), "ws", 600), undefined);
  assert.equal(answers.ticketFor(request({ sampling: { temperature: 0 } }), "ws", 600)?.ttlSeconds, 600);
  const withTools = request({
    sampling: { temperature: 0 },
    serverTools: [{ id: "web_search", maxUses: 1, events: false }],
  });
  assert.equal(
    answers.ticketFor(withTools, "ws", 600),
    undefined,
    "server tools: only when asked explicitly",
  );
  withTools.responseCacheTtlSeconds = 60;
  assert.equal(answers.ticketFor(withTools, "ws", 600)?.ttlSeconds, 60);
  assert.equal(answers.ticketFor(request({ responseCacheTtlSeconds: 30 }), "ws", null)?.ttlSeconds, 30);
  const optOut = request({ sampling: { temperature: 0 }, responseCacheTtlSeconds: 0 });
  assert.equal(answers.ticketFor(optOut, "ws", 600), undefined, "hi_cache: false bypasses the policy");
  assert.equal(
    answers.ticketFor(request({ responseCacheTtlSeconds: 999_999 }), "ws", null)?.ttlSeconds,
    3_600,
  );
});

test("the key is the canonical request within one workspace, whatever the stream flag, user or field order", () => {
  const a = computeCacheKey("ws1", request({ stream: true, user: "alice", metadata: { x: 1 } }));
  const b = computeCacheKey("ws1", request());
  assert.equal(a, b);
  assert.notEqual(computeCacheKey("ws2", request()), b, "another workspace, another key");
  assert.notEqual(computeCacheKey("ws1", request({ sampling: { temperature: 0 } })), b);
  assert.notEqual(computeCacheKey("ws1", request({ maxOutputTokens: 10 })), b);
  const tools = (order: "ab" | "ba") =>
    request({
      tools: [
        {
          name: "f",
          parameters: order === "ab" ? { a: 1, b: 2 } : { b: 2, a: 1 },
          param: order === "ab" ? "tools[0]" : "tools[3]",
        },
      ],
    });
  assert.equal(computeCacheKey("ws1", tools("ab")), computeCacheKey("ws1", tools("ba")));
});

test("stored answers are read back; one larger than an entry may be is not stored", async () => {
  const answers = cache(300);
  const ticket = answers.ticketFor(request({ responseCacheTtlSeconds: 60 }), "ws", null)!;
  assert.equal(await answers.read(ticket), undefined);
  await answers.write(ticket, RESULT);
  assert.deepEqual(await answers.read(ticket), RESULT);
  const big = answers.ticketFor(request({ responseCacheTtlSeconds: 60, model: "x/big" }), "ws", null)!;
  await answers.write(big, { ...RESULT, content: [{ type: "text", text: "x".repeat(400) }] });
  assert.equal(await answers.read(big), undefined);
});

test("the in-process store evicts the least recently used entries to stay within its bytes, and expires entries", async () => {
  let now = 0;
  const store = createMemoryResponseCacheStore(400, () => now);
  await store.set("a", "x".repeat(90), 10); // 182 bytes
  await store.set("b", "y".repeat(90), 10);
  assert.equal(await store.get("a"), "x".repeat(90)); // a is now the most recent
  await store.set("c", "z".repeat(90), 10); // evicts b, the least recently used
  assert.equal(await store.get("b"), undefined);
  assert.ok(await store.get("a"));
  assert.ok(await store.get("c"));
  assert.ok(store.bytes <= 400);
  now = 10_001;
  assert.equal(await store.get("a"), undefined, "expired");
  await store.set("huge", "h".repeat(1_000), 10);
  assert.equal(await store.get("huge"), undefined, "larger than the store: not kept");
});
