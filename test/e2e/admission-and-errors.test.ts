/**
 * Auth, admission and request-validation failures, each in the caller's format with the field
 * named, on a real gateway in both runtime modes.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { forEachGatewayMode, OTHER_MODEL, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null; request_id?: string };
}

async function postChat(context: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { response, status: response.status, body: JSON.parse(text) as ErrorBody };
}

const hello = { model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] };

forEachGatewayMode("admission and validation errors", async (context, t) => {
  await t.test("missing, malformed and unknown keys → invalid_api_key 401", async () => {
    for (const authorization of [undefined, "Bearer nope", `Bearer hi-${"x".repeat(40)}`, "Basic abc"]) {
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (authorization) headers.Authorization = authorization;
      const response = await fetch(`${context.url}/api/v1/chat/completions`, {
        method: "POST",
        headers,
        body: JSON.stringify(hello),
      });
      assert.equal(response.status, 401, String(authorization));
      const body = (await response.json()) as ErrorBody;
      assert.equal(body.error.code, "invalid_api_key");
      assert.equal(body.error.type, "authentication_error");
      assert.equal(body.error.request_id, response.headers.get("x-request-id"));
      assert.equal(response.headers.get("retry-after"), null);
    }
    const client = context.createClient(`hi-${"y".repeat(40)}`);
    await assert.rejects(client.chat.completions.create(hello as never), OpenAI.AuthenticationError);
  });

  await t.test("disabled, revoked and expired keys → invalid_api_key; re-enabled works at once", async () => {
    const { key, secret } = await context.admin.createKey({ workspaceId: context.workspaceId, name: "temp" });
    const client = context.createClient(secret);
    await client.chat.completions.create(hello as never); // cached as valid now
    await context.admin.setKeyStatus(key.id, "disabled");
    const disabled = await client.chat.completions.create(hello as never).catch((error: unknown) => error);
    assert.ok(disabled instanceof OpenAI.AuthenticationError, "disabled key must fail on the next request");
    await context.admin.setKeyStatus(key.id, "active");
    await client.chat.completions.create(hello as never);
    await context.admin.setKeyStatus(key.id, "revoked");
    await assert.rejects(client.chat.completions.create(hello as never), OpenAI.AuthenticationError);

    const expiring = await context.admin.createKey({
      workspaceId: context.workspaceId,
      expiresAt: new Date(Date.now() + 1500),
    });
    const expiringClient = context.createClient(expiring.secret);
    await expiringClient.chat.completions.create(hello as never);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const expired = await expiringClient.chat.completions
      .create(hello as never)
      .catch((error: unknown) => error);
    assert.ok(expired instanceof OpenAI.AuthenticationError);
    assert.match((expired as Error).message, /expired/);
  });

  await t.test("model outside the key's allowlist → model_not_allowed 403", async () => {
    const { secret } = await context.admin.createKey({
      workspaceId: context.workspaceId,
      models: [OTHER_MODEL],
    });
    const result = await postChat(context, hello, { Authorization: `Bearer ${secret}` });
    assert.equal(result.status, 403);
    assert.equal(result.body.error.code, "model_not_allowed");
    assert.equal(result.body.error.param, "model");
    const allowed = await postChat(
      context,
      { ...hello, model: OTHER_MODEL },
      { Authorization: `Bearer ${secret}` },
    );
    assert.equal(allowed.status, 200);
  });

  await t.test("unknown model → invalid_request 400 naming model", async () => {
    const result = await postChat(context, { ...hello, model: "nobody/nothing" });
    assert.equal(result.status, 400);
    assert.equal(result.body.error.code, "invalid_request");
    assert.equal(result.body.error.param, "model");
  });

  await t.test("schema violations name the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...hello, temperature: 3 }, "temperature"],
      [{ ...hello, top_p: -0.1 }, "top_p"],
      [{ ...hello, max_tokens: 0 }, "max_tokens"],
      [{ ...hello, messages: [] }, "messages"],
      [{ ...hello, messages: [{ role: "wizard", content: "x" }] }, "messages[0].role"],
      [{ ...hello, n: 2 }, "n"],
      [{ ...hello, service_tier: "flex" }, "service_tier"],
      [{ ...hello, modalities: ["text", "audio"] }, "modalities"],
      [{ ...hello, audio: { voice: "alloy" } }, "audio"],
      [{ ...hello, logit_bias: { "42": 101 } }, "logit_bias.42"],
      [{ model: TEST_MODEL }, "messages"],
    ];
    for (const [body, param] of cases) {
      const result = await postChat(context, body);
      assert.equal(result.status, 400, `${param}: ${JSON.stringify(result.body)}`);
      assert.equal(result.body.error.code, "invalid_request", param);
      assert.equal(result.body.error.param, param, JSON.stringify(result.body));
      assert.ok(result.body.error.message.length > 0);
    }
  });

  await t.test("invalid JSON → invalid_request; oversized body → payload_too_large 413", async () => {
    const invalid = await postChat(context, "{not json");
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.code, "invalid_request");
    assert.match(invalid.body.error.message, /not valid JSON/);

    const limit = context.gateway.config.maxBodyBytes;
    const huge = JSON.stringify({ ...hello, messages: [{ role: "user", content: "x".repeat(limit + 10) }] });
    const tooLarge = await postChat(context, huge);
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.error.code, "payload_too_large");

    // Chunked upload without Content-Length: refused while streaming, not after buffering it all.
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit * 3) return controller.close();
        const chunk = new Uint8Array(64 * 1024).fill(32);
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit).catch((error: unknown) => error);
    assert.equal((response as Response).status, 413, `expected a 413 response, got ${String(response)}`);
    assert.ok(sent < limit * 3, "the gateway stopped reading before the whole body arrived");
  });

  await t.test("locked workspace → workspace_locked 403; no credit → insufficient_credits 402", async () => {
    await context.admin.updateWorkspace(context.workspaceId, { locked: true });
    const locked = await postChat(context, hello);
    assert.equal(locked.status, 403);
    assert.equal(locked.body.error.code, "workspace_locked");
    await context.admin.updateWorkspace(context.workspaceId, { locked: false });

    const poor = await context.admin.createWorkspace({ name: "poor", creditsUsd: "0" });
    const { secret } = await context.admin.createKey({ workspaceId: poor.id });
    const broke = await postChat(context, hello, { Authorization: `Bearer ${secret}` });
    assert.equal(broke.status, 402);
    assert.equal(broke.body.error.code, "insufficient_credits");
    assert.equal(broke.response.headers.get("retry-after"), null);

    await context.admin.updateWorkspace(poor.id, { invoicing: true });
    const invoiced = await postChat(context, hello, { Authorization: `Bearer ${secret}` });
    assert.equal(invoiced.status, 200, "invoicing admits without balance");
  });

  await t.test("generation lookup: unknown id and another workspace's id → invalid_request", async () => {
    const ok = await postChat(context, hello);
    const requestId = ok.response.headers.get("x-request-id")!;
    const other = await context.admin.createWorkspace({ name: "other", creditsUsd: "1" });
    const { secret } = await context.admin.createKey({ workspaceId: other.id });
    for (const [key, id] of [
      [secret, requestId],
      [context.apiKey, "does-not-exist"],
    ]) {
      const response = await fetch(`${context.url}/api/v1/generation?id=${id}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      assert.equal(response.status, 400);
      const body = (await response.json()) as ErrorBody;
      assert.equal(body.error.code, "invalid_request");
      assert.equal(body.error.param, "id");
    }
  });
});
