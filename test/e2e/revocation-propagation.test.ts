/**
 * A key change reaches every instance within 30 s: disabling or revoking a key
 * through instance A's admin API applies to A's very next request, to an instance B sharing A's
 * Redis pub/sub within 1 s, and to an instance C that never hears the message (a different state
 * prefix, so C subscribes to another channel) within the auth cache TTL — far inside 30 s.
 * Three gateway instances share one PostgreSQL database and one Redis.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createStatePrefix, startGatewayInstance, waitFor } from "../helpers/disposable-servers.js";
import { startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTestDatabase, requireMode, TEST_REDIS_URL } from "../helpers/storage-modes.js";
import { TEST_MODEL } from "../helpers/test-gateway.js";

const SECRET = `revocation-secret-${Date.now()}`;
const AUTH_CACHE_TTL_MS = 5_000; // the product default, stated here so the bound below is explicit
const SPEC_BOUND_MS = 30_000;

async function lookupStatus(url: string, apiKey: string, requestId: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/generation?id=${encodeURIComponent(requestId)}`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  await response.arrayBuffer();
  return response.status;
}

async function chatStatus(url: string, apiKey: string): Promise<number> {
  const response = await chat(url, apiKey);
  await response.arrayBuffer();
  return response.status;
}

async function chat(url: string, apiKey: string): Promise<Response> {
  return fetch(`${url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
  });
}

/** Milliseconds from `since` until the instance answers 401, polling every `intervalMs`. */
async function measureRefusal(
  url: string,
  apiKey: string,
  requestId: string,
  since: number,
  intervalMs: number,
): Promise<number> {
  return waitFor(
    "key refused",
    async () => ((await lookupStatus(url, apiKey, requestId)) === 401 ? Date.now() - since : undefined),
    { timeoutMs: SPEC_BOUND_MS + 2_000, intervalMs },
  );
}

async function adminAction(url: string, keyId: string, action: "disable" | "enable" | "revoke") {
  const response = await fetch(`${url}/internal/admin/keys/${keyId}/${action}`, {
    method: "POST",
    headers: { "X-Internal-Token": SECRET },
  });
  assert.equal(response.status, 200, await response.text());
}

test("disable and revoke propagate: at once here, <1 s by pub/sub, within the TTL without it", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startFakeOpenAiUpstream();
  const database = await createTestDatabase();
  const sharedPrefix = createStatePrefix();
  const common = {
    upstreamBaseUrl: upstream.baseUrl,
    databaseUrl: database.url,
    redisUrl: TEST_REDIS_URL,
    internalSharedSecret: SECRET,
    authCacheTtlMs: AUTH_CACHE_TTL_MS,
  };
  const instances = [];
  try {
    const a = await startGatewayInstance({ ...common, statePrefix: sharedPrefix });
    instances.push(a);
    const b = await startGatewayInstance({ ...common, statePrefix: sharedPrefix });
    instances.push(b);
    // C listens on another prefix: every key-changed message is lost for it.
    const c = await startGatewayInstance({ ...common, statePrefix: createStatePrefix() });
    instances.push(c);

    const workspace = await a.store.workspaces.create({
      name: "rev",
      creditsMicroUsd: 10_000_000,
      invoicing: false,
    });
    const results: Record<string, number[]> = { b: [], c: [] };

    for (const action of ["disable", "revoke"] as const) {
      const { key, secret } = await a.store.apiKeys.create({ workspaceId: workspace.id, name: action });
      // Warm every instance's cache with the valid key, and remember a request id to look up.
      const first = await chat(a.url, secret);
      assert.equal(first.status, 200);
      await first.arrayBuffer();
      const requestId = first.headers.get("x-request-id")!;
      for (const instance of [a, b]) assert.equal(await lookupStatus(instance.url, secret, requestId), 200);
      // C shares only PostgreSQL with A (its Redis prefix is another): it finds the record once
      // A's group commit has written it, which may wait 10 ms for company (decision 0351).
      // A and B find it at once through its Redis copy.
      await waitFor(
        "the record visible on C",
        async () => ((await lookupStatus(c.url, secret, requestId)) === 200 ? true : undefined),
        { timeoutMs: 2_000, intervalMs: 10 },
      );

      await adminAction(a.url, key.id, action);
      const changedAt = Date.now();
      const onA = await chat(a.url, secret);
      assert.equal(onA.status, 401, `${action}: the instance that made the change refuses the next request`);
      assert.equal(((await onA.json()) as { error: { code: string } }).error.code, "invalid_api_key");

      const [onB, onC] = await Promise.all([
        measureRefusal(b.url, secret, requestId, changedAt, 25),
        measureRefusal(c.url, secret, requestId, changedAt, 100),
      ]);
      results.b.push(onB);
      results.c.push(onC);
      t.diagnostic(`${action}: B refused after ${onB} ms (pub/sub), C after ${onC} ms (no message, TTL)`);
      assert.ok(onB < 1_000, `${action}: B (pub/sub) took ${onB} ms`);
      assert.ok(onC <= AUTH_CACHE_TTL_MS + 1_000, `${action}: C (TTL only) took ${onC} ms`);
      assert.ok(onC < SPEC_BOUND_MS);
      for (const instance of [b, c]) assert.equal(await chatStatus(instance.url, secret), 401);
    }

    // Re-enabling a disabled key is a key change too (the 30 s bound is about disabling, but the
    // path is the same).
    const { key, secret } = await a.store.apiKeys.create({ workspaceId: workspace.id, name: "re-enable" });
    await adminAction(a.url, key.id, "disable");
    assert.equal(await chatStatus(b.url, secret), 401);
    await adminAction(a.url, key.id, "enable");
    await waitFor(
      "B accepts the re-enabled key",
      async () => ((await chatStatus(b.url, secret)) === 200 ? true : undefined),
      { timeoutMs: 2_000, intervalMs: 50 },
    );
  } finally {
    for (const instance of instances.reverse()) await instance.close();
    await upstream.close();
    await database.drop();
  }
});
