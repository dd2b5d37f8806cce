/**
 * The response cache as a key or workspace policy, end to end in both storage modes, set through
 * the admin API as an operator would: under a key's policy the second identical temperature-0
 * request is a $0 hit recorded with `cache_hit: true`, a temperature-1 one is never cached; a
 * workspace's policy covers a key without its own; clearing the policy stops the hits at once;
 * `GET /api/v1/key` shows the policy that applies.
 */
import assert from "node:assert/strict";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

const DETERMINISTIC = {
  model: TEST_MODEL,
  max_tokens: 200,
  temperature: 0,
  messages: [{ role: "user", content: "Name a colour" }],
};

async function chat(context: TestGateway, body: Record<string, unknown>, apiKey = context.apiKey) {
  const response = await fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return {
    id: response.headers.get("x-request-id") ?? "",
    content: JSON.parse(text).choices[0].message.content,
  };
}

async function readRecord(context: TestGateway, id: string, apiKey = context.apiKey) {
  for (const deadline = Date.now() + 5_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = (await response.json()) as {
      data: { status: string; cache_hit: boolean; cost_micro_usd: string };
    };
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.data.status !== "in_progress" || Date.now() > deadline) return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The admin API of the running gateway, as an operator calls it. */
async function adminPatch(context: TestGateway, path: string, body: Record<string, unknown>) {
  const response = await fetch(`${context.url}/internal/admin${path}`, {
    method: "PATCH",
    headers: { "x-internal-token": context.internalSecret, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, Record<string, unknown>>;
  assert.equal(response.status, 200, JSON.stringify(json));
  return json;
}

async function readKeyPolicy(context: TestGateway, apiKey = context.apiKey) {
  const response = await fetch(`${context.url}/api/v1/key`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const body = (await response.json()) as {
    data: { response_cache: { ttl_seconds: number | null; source: string } };
  };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.data.response_cache;
}

forEachGatewayMode(
  "a key's policy caches deterministic requests at $0, never temperature 1; clearing it stops the hits",
  async (context) => {
    assert.deepEqual(await readKeyPolicy(context), { ttl_seconds: null, source: "none" });
    const set = await adminPatch(context, `/keys/${context.keyId}`, { response_cache_ttl_seconds: 600 });
    assert.equal(set.key.response_cache_ttl_seconds, 600);
    assert.deepEqual(await readKeyPolicy(context), { ttl_seconds: 600, source: "key" });

    const first = await chat(context, DETERMINISTIC);
    const firstRecord = await readRecord(context, first.id);
    assert.equal(firstRecord.cache_hit, false);
    assert.notEqual(firstRecord.cost_micro_usd, "0");
    const balanceBefore = (await context.admin.getWorkspace(context.workspaceId)).balanceMicroUsd;
    const second = await chat(context, DETERMINISTIC);
    assert.equal(second.content, first.content);
    const secondRecord = await readRecord(context, second.id);
    assert.equal(secondRecord.cache_hit, true);
    assert.equal(secondRecord.cost_micro_usd, "0");
    assert.equal(context.upstream.requests.length, 1, "the hit did not reach the upstream");
    assert.equal(
      (await context.admin.getWorkspace(context.workspaceId)).balanceMicroUsd,
      balanceBefore,
      "a hit costs nothing",
    );

    // Sampled requests are not meant to repeat: the policy leaves them alone, both times.
    const sampled = { ...DETERMINISTIC, temperature: 1 };
    await chat(context, sampled);
    const sampledAgain = await chat(context, sampled);
    assert.equal((await readRecord(context, sampledAgain.id)).cache_hit, false);
    assert.equal(context.upstream.requests.length, 3);

    // null clears the policy; the change reaches the key's cached state at once.
    const cleared = await adminPatch(context, `/keys/${context.keyId}`, { response_cache_ttl_seconds: null });
    assert.equal(cleared.key.response_cache_ttl_seconds, null);
    const afterClear = await chat(context, DETERMINISTIC);
    assert.equal((await readRecord(context, afterClear.id)).cache_hit, false);
    assert.equal(context.upstream.requests.length, 4);
    assert.deepEqual(await readKeyPolicy(context), { ttl_seconds: null, source: "none" });

    // The change is in the audit log with the key's other changes.
    const entries = await context.gateway.store.keyLimits.listAudit({ apiKeyId: context.keyId });
    assert.deepEqual(
      entries
        .filter((entry) => entry.action === "key.limits_updated")
        .map((entry) => [
          (entry.details as { before: Record<string, unknown> }).before.response_cache_ttl_seconds,
          (entry.details as { after: Record<string, unknown> }).after.response_cache_ttl_seconds,
        ]),
      [
        [600, null],
        [null, 600],
      ],
    );
  },
);

forEachGatewayMode(
  "a workspace's policy covers its keys without their own; a key's own policy wins",
  async (context) => {
    const set = await adminPatch(context, `/workspaces/${context.workspaceId}`, {
      response_cache_ttl_seconds: 300,
    });
    assert.equal(set.workspace.response_cache_ttl_seconds, 300);
    assert.deepEqual(await readKeyPolicy(context), { ttl_seconds: 300, source: "workspace" });

    await chat(context, DETERMINISTIC);
    const hit = await chat(context, DETERMINISTIC);
    assert.equal((await readRecord(context, hit.id)).cache_hit, true);
    assert.equal(context.upstream.requests.length, 1);

    const { secret } = await context.admin.createKey({
      workspaceId: context.workspaceId,
      name: "own policy",
      responseCacheTtlSeconds: 60,
    });
    assert.deepEqual(await readKeyPolicy(context, secret), { ttl_seconds: 60, source: "key" });

    await adminPatch(context, `/workspaces/${context.workspaceId}`, { response_cache_ttl_seconds: null });
    const afterClear = await chat(context, DETERMINISTIC);
    assert.equal((await readRecord(context, afterClear.id)).cache_hit, false, "no policy: no lookup");
    assert.equal(context.upstream.requests.length, 2);
    assert.deepEqual(await readKeyPolicy(context), { ttl_seconds: null, source: "none" });
  },
);
