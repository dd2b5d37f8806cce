/**
 * Playground keys: the internal endpoint
 * that mints one-time playground keys, and the keys themselves — single use across instances,
 * 10-minute TTL, hard purge, per-user mint rate limit, real billing labelled with their source.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hashApiKey } from "../../src/auth/api-key.js";
import { createStatePrefix, startGatewayInstance } from "../helpers/disposable-servers.js";
import { startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTestDatabase, requireMode, TEST_REDIS_URL } from "../helpers/storage-modes.js";
import { forEachGatewayMode, TEST_MODEL } from "../helpers/test-gateway.js";

interface ErrorBody {
  error: {
    code: string;
    type: string;
    message: string;
    param: string | null;
    request_id?: string;
    retry_after_seconds?: number;
  };
}
interface MintBody {
  key: string;
  expires_at: string;
  source: string;
}

function mint(url: string, body: unknown, headers: Record<string, string>) {
  return fetch(`${url}/api/v1/playground-keys`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function chatStatus(
  url: string,
  apiKey: string,
): Promise<{ status: number; requestId: string; text: string }> {
  const response = await fetch(`${url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
  });
  return {
    status: response.status,
    requestId: response.headers.get("x-request-id")!,
    text: await response.text(),
  };
}

forEachGatewayMode("playground keys", async (context, t) => {
  const secret = context.gateway.internalSecret;
  const token = { "X-Internal-Token": secret };
  const user = (name: string) => ({ workspace_id: context.workspaceId, user_id: name });

  await t.test(
    "only the internal token mints; API keys and wrong tokens get 401 in the common envelope",
    async () => {
      const flipped = secret.slice(0, -1) + (secret.endsWith("a") ? "b" : "a");
      const refusals: Array<[string, Record<string, string>]> = [
        ["no token", {}],
        ["wrong token", { "X-Internal-Token": "nope" }],
        ["one character changed", { "X-Internal-Token": flipped }],
        ["an API key instead", { Authorization: `Bearer ${context.apiKey}` }],
        ["an API key as x-api-key", { "x-api-key": context.apiKey }],
        ["the token plus an API key", { ...token, Authorization: `Bearer ${context.apiKey}` }],
      ];
      for (const [label, headers] of refusals) {
        const response = await mint(context.url, user("u-auth"), headers);
        assert.equal(response.status, 401, label);
        const body = (await response.json()) as ErrorBody;
        assert.equal(body.error.code, "invalid_api_key", label);
        assert.equal(body.error.type, "authentication_error", label);
        assert.equal(body.error.request_id, response.headers.get("x-request-id"), label);
        assert.ok(!JSON.stringify(body).includes(secret), `${label}: the secret is never echoed`);
        assert.ok(!JSON.stringify(body).includes(context.apiKey), `${label}: the API key is never echoed`);
      }
    },
  );

  await t.test("the internal token grants nothing on other routes", async () => {
    const chat = await fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { ...token, "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(chat.status, 401);
    await chat.arrayBuffer();
    const lookup = await fetch(`${context.url}/api/v1/generation?id=x`, { headers: token });
    assert.equal(lookup.status, 401);
    await lookup.arrayBuffer();
  });

  await t.test("the body is validated with the field named in param", async () => {
    const cases: Array<[unknown, string | null]> = [
      [{}, "workspace_id"],
      [{ workspace_id: context.workspaceId }, "user_id"],
      [{ workspace_id: "", user_id: "u" }, "workspace_id"],
      [{ ...user("u"), source: "admin" }, "source"],
      [{ ...user("u"), user_id: 42 }, "user_id"],
      [{ ...user("u"), scope: "all" }, "scope"],
      [{ workspace_id: "ws_unknown", user_id: "u" }, "workspace_id"],
      [{ ...user("u"), user_id: "\u0000" }, "user_id"],
      [{ workspace_id: `${context.workspaceId}\u0000`, user_id: "u" }, "workspace_id"],
      ["{not json", null],
      [[], null],
    ];
    for (const [body, param] of cases) {
      const response = await mint(context.url, body, token);
      const parsed = (await response.json()) as ErrorBody;
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(parsed.error.code, "invalid_request", JSON.stringify(body));
      assert.equal(parsed.error.param, param, JSON.stringify(body));
    }
  });

  await t.test("201 {key, expires_at, source}; the key works once, is billed and labelled", async () => {
    const before = (await context.gateway.store.workspaces.get(context.workspaceId))!.balanceMicroUsd;
    const mintedAt = Date.now();
    const response = await mint(context.url, user("u-use"), token);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("cache-control"), "no-store");
    const minted = (await response.json()) as MintBody;
    assert.deepEqual(Object.keys(minted).sort(), ["expires_at", "key", "source"]);
    assert.equal(minted.source, "playground");
    assert.match(minted.key, /^hi-[0-9A-Za-z]{40}$/);
    const ttl = Date.parse(minted.expires_at) - mintedAt;
    assert.ok(Math.abs(ttl - 600_000) < 5_000, `expires 10 minutes after minting (got ${ttl} ms)`);

    const first = await chatStatus(context.url, minted.key);
    assert.equal(first.status, 200, first.text);
    const second = await chatStatus(context.url, minted.key);
    assert.equal(second.status, 401, "single use");
    assert.equal((JSON.parse(second.text) as ErrorBody).error.code, "invalid_api_key");
    assert.ok(!second.text.includes(minted.key));

    const lookup = await fetch(`${context.url}/api/v1/generation?id=${first.requestId}`, {
      headers: { Authorization: `Bearer ${context.apiKey}` },
    });
    const generation = (
      (await lookup.json()) as { data: { source: string; cost_micro_usd: string; status: string } }
    ).data;
    assert.equal(generation.source, "playground");
    assert.equal(generation.status, "ok");
    const cost = Number(generation.cost_micro_usd);
    assert.ok(cost > 0, "real usage is billed");
    const after = (await context.gateway.store.workspaces.get(context.workspaceId))!.balanceMicroUsd;
    assert.equal(before - after, cost, "billed to the workspace");
  });

  await t.test("source chat is recorded as chat", async () => {
    const minted = (await (
      await mint(context.url, { ...user("u-chat"), source: "chat" }, token)
    ).json()) as MintBody;
    assert.equal(minted.source, "chat");
    const used = await chatStatus(context.url, minted.key);
    assert.equal(used.status, 200);
    const record = await context.gateway.store.generations.get(used.requestId, context.workspaceId);
    assert.equal(record?.source, "chat");
  });

  await t.test("20 concurrent requests with one key: exactly one is admitted", async () => {
    const minted = (await (await mint(context.url, user("u-race"), token)).json()) as MintBody;
    const results = await Promise.all(Array.from({ length: 20 }, () => chatStatus(context.url, minted.key)));
    assert.equal(results.filter((result) => result.status === 200).length, 1);
    assert.equal(results.filter((result) => result.status === 401).length, 19);
  });

  await t.test("minting is rate-limited per user: 10 a minute, then 429 with Retry-After", async () => {
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => mint(context.url, user("u-burst"), token)),
    );
    const statuses = responses.map((response) => response.status).sort();
    assert.deepEqual(statuses, [...Array(10).fill(201), 429, 429]);
    const refused = responses.find((response) => response.status === 429)!;
    const body = (await refused.json()) as ErrorBody;
    assert.equal(body.error.code, "rate_limit_exceeded");
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(body.error.retry_after_seconds, retryAfter);
    const other = await mint(context.url, user("u-other"), token);
    assert.equal(other.status, 201, "other users are not affected");
    await Promise.all(responses.map((response) => (response.bodyUsed ? undefined : response.arrayBuffer())));
    await other.arrayBuffer();
  });
});

test("playground keys expire, are refused, and are hard-purged while usage records stay", async () => {
  const upstream = await startFakeOpenAiUpstream();
  const gateway = await startGatewayInstance({
    upstreamBaseUrl: upstream.baseUrl,
    internalSharedSecret: "expiry-secret",
    playgroundKeyPolicy: { ttlMs: 1_500, purgeIntervalMs: 3_600_000 },
  });
  try {
    const workspace = await gateway.store.workspaces.create({
      name: "exp",
      creditsMicroUsd: 1_000_000,
      invoicing: false,
    });
    const headers = { "X-Internal-Token": "expiry-secret" };
    const body = { workspace_id: workspace.id, user_id: "u" };
    const used = (await (await mint(gateway.url, body, headers)).json()) as MintBody;
    const unused = (await (await mint(gateway.url, body, headers)).json()) as MintBody;
    const call = await chatStatus(gateway.url, used.key);
    assert.equal(call.status, 200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(unused.expires_at) - Date.now() + 100));
    assert.equal((await chatStatus(gateway.url, unused.key)).status, 401, "an expired key is refused");
    assert.equal(await gateway.purgeExpiredPlaygroundKeys(), 2);
    for (const key of [used.key, unused.key]) {
      assert.equal(await gateway.store.apiKeys.findByHash(hashApiKey(key)), null, "hard-purged");
    }
    const record = await gateway.store.generations.get(call.requestId, workspace.id);
    assert.equal(record?.source, "playground", "usage records outlive the key");
  } finally {
    await gateway.close();
    await upstream.close();
  }
});

test("without INTERNAL_SHARED_SECRET the endpoint does not exist (404)", async () => {
  const upstream = await startFakeOpenAiUpstream();
  const gateway = await startGatewayInstance({ upstreamBaseUrl: upstream.baseUrl });
  try {
    const attempts: Array<Record<string, string>> = [{}, { "X-Internal-Token": gateway.internalSecret }];
    for (const headers of attempts) {
      const response = await mint(gateway.url, { workspace_id: "w", user_id: "u" }, headers);
      assert.equal(response.status, 404);
      const body = (await response.json()) as ErrorBody;
      assert.equal(body.error.code, "invalid_request");
      assert.equal(body.error.request_id, response.headers.get("x-request-id"));
    }
  } finally {
    await gateway.close();
    await upstream.close();
  }
});

test("single use holds across two instances: 20 concurrent requests, half to each, one admitted", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startFakeOpenAiUpstream();
  const database = await createTestDatabase();
  const statePrefix = createStatePrefix();
  const options = {
    upstreamBaseUrl: upstream.baseUrl,
    databaseUrl: database.url,
    redisUrl: TEST_REDIS_URL,
    internalSharedSecret: "two-instances",
    statePrefix,
  };
  const a = await startGatewayInstance(options);
  const b = await startGatewayInstance(options).catch(async (error) => {
    await a.close();
    throw error;
  });
  try {
    const workspace = await a.store.workspaces.create({
      name: "2i",
      creditsMicroUsd: 1_000_000,
      invoicing: false,
    });
    for (let round = 0; round < 3; round++) {
      const minted = (await (
        await mint(
          a.url,
          { workspace_id: workspace.id, user_id: `u-${round}` },
          { "X-Internal-Token": "two-instances" },
        )
      ).json()) as MintBody;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) => chatStatus(index % 2 === 0 ? a.url : b.url, minted.key)),
      );
      assert.equal(results.filter((result) => result.status === 200).length, 1, `round ${round}`);
      assert.equal(results.filter((result) => result.status === 401).length, 19, `round ${round}`);
    }
  } finally {
    await b.close();
    await a.close();
    await upstream.close();
    await database.drop();
  }
});
