/**
 * Browsers on other origins can call the public API: preflights answered with the path's methods
 * and the requested headers, every answer (streamed, plain, error) readable with its request id
 * and Retry-After, configured origins echoed or refused, and the internal routes left without any
 * CORS header.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { startTestGateway, TEST_MODEL } from "../helpers/test-gateway.js";

const ORIGIN = "https://app.example.com";
const REQUESTED_HEADERS = "authorization, content-type, x-stainless-os";
const EXPOSED = ["x-request-id", "retry-after", "x-should-retry"];

function preflight(url: string, origin = ORIGIN, method = "POST") {
  return fetch(url, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": method,
      "Access-Control-Request-Headers": REQUESTED_HEADERS,
    },
  });
}

function assertReadableCrossOrigin(response: Response, allowOrigin: string, what: string): void {
  assert.equal(response.headers.get("access-control-allow-origin"), allowOrigin, what);
  const exposed = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase();
  for (const name of EXPOSED) assert.ok(exposed.split(/\s*,\s*/).includes(name), `${what}: exposes ${name}`);
  assert.equal(response.headers.get("access-control-allow-credentials"), null, `${what}: no credentials`);
}

function assertNoCors(response: Response, what: string): void {
  for (const [name] of response.headers) {
    assert.ok(!name.startsWith("access-control-"), `${what}: carries ${name}`);
  }
}

test("CORS with the default configuration (any origin) [embedded]", async (t) => {
  const context = await startTestGateway("embedded");
  t.after(() => context.close());
  const chat = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: {
        Origin: ORIGIN,
        Authorization: `Bearer ${context.apiKey}`,
        "Content-Type": "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    });

  await t.test("preflights of the API paths: 204, their methods, the requested headers", async () => {
    for (const [path, method, methods] of [
      ["/api/v1/chat/completions", "POST", "POST"],
      ["/api/v1/responses", "POST", "POST"],
      ["/api/v1/messages", "POST", "POST"],
      ["/api/v1/models", "GET", "GET, HEAD"],
      ["/api/v1/models/test%2Fchat-model", "GET", "GET, HEAD"],
    ] as const) {
      const response = await preflight(`${context.url}${path}`, ORIGIN, method);
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get("access-control-allow-origin"), "*", path);
      assert.equal(response.headers.get("access-control-allow-methods"), methods, path);
      assert.equal(response.headers.get("access-control-allow-headers"), REQUESTED_HEADERS, path);
      assert.equal(response.headers.get("access-control-max-age"), "7200", path);
      assert.equal(response.headers.get("access-control-allow-credentials"), null, path);
      assert.equal(await response.text(), "", path);
    }
  });

  await t.test("a streamed and a plain answer are readable, with their request id", async () => {
    context.upstream.enqueue(fakeReply.sse(buildTextChunks(["Hello", " there"])));
    const streamed = await chat({
      model: TEST_MODEL,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get("content-type") ?? "", /text\/event-stream/);
    assertReadableCrossOrigin(streamed, "*", "stream");
    assert.ok(streamed.headers.get("x-request-id"));
    assert.match(await streamed.text(), /data: \[DONE\]/);

    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "plain" })));
    const plain = await chat({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] });
    assert.equal(plain.status, 200);
    assertReadableCrossOrigin(plain, "*", "plain");

    const models = await fetch(`${context.url}/api/v1/models`, { headers: { Origin: ORIGIN } });
    assert.equal(models.status, 200);
    assertReadableCrossOrigin(models, "*", "models");
  });

  await t.test("error answers in every format are readable", async () => {
    const wrongKey = await chat(
      { model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] },
      { Authorization: "Bearer hi-not-a-key" },
    );
    assert.equal(wrongKey.status, 401);
    assertReadableCrossOrigin(wrongKey, "*", "401 chat");

    const badBody = await chat({ model: TEST_MODEL, messages: "not a list" });
    assert.equal(badBody.status, 400);
    assertReadableCrossOrigin(badBody, "*", "400 chat");

    const messages = await fetch(`${context.url}/api/v1/messages`, {
      method: "POST",
      headers: { Origin: ORIGIN, "x-api-key": "hi-not-a-key", "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, max_tokens: 5, messages: [] }),
    });
    assert.equal(messages.status, 401);
    assert.equal(((await messages.json()) as { type: string }).type, "error", "messages envelope");
    assertReadableCrossOrigin(messages, "*", "401 messages");

    context.upstream.enqueue(fakeReply.error(503, { error: { message: "down" } }));
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "down" } }));
    const upstreamDown = await chat({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] });
    assert.ok(upstreamDown.status >= 500, `upstream failure answered ${upstreamDown.status}`);
    assertReadableCrossOrigin(upstreamDown, "*", "5xx");

    const wrongMethod = await fetch(`${context.url}/api/v1/chat/completions`, {
      headers: { Origin: ORIGIN },
    });
    assert.equal(wrongMethod.status, 405);
    assertReadableCrossOrigin(wrongMethod, "*", "405");
  });

  await t.test(
    "the internal and admin routes carry no CORS header, and OPTIONS there stays 405",
    async () => {
      const adminPreflight = await preflight(`${context.url}/internal/admin/workspaces`);
      assert.equal(adminPreflight.status, 405);
      assertNoCors(adminPreflight, "admin preflight");
      const unknownPreflight = await preflight(`${context.url}/internal/admin/nothing-here`);
      assert.equal(unknownPreflight.status, 404);
      assertNoCors(unknownPreflight, "unknown internal path");
      const admin = await fetch(`${context.url}/internal/admin/workspaces`, {
        headers: { Origin: ORIGIN, "X-Internal-Token": context.gateway.internalSecret },
      });
      assert.equal(admin.status, 200);
      assertNoCors(admin, "admin answer");
      const adminRefused = await fetch(`${context.url}/internal/admin/workspaces`, {
        headers: { Origin: ORIGIN },
      });
      assert.equal(adminRefused.status, 401);
      assertNoCors(adminRefused, "admin refusal");
      // Under /api/v1, but taking the internal token: called from servers only.
      const playground = await preflight(`${context.url}/api/v1/playground-keys`);
      assert.equal(playground.status, 405);
      assertNoCors(playground, "playground-keys preflight");
    },
  );

  await t.test("the official openai client works as before", async () => {
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "still fine" })));
    const completion = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(completion.choices[0]?.message.content, "still fine");
  });
});

test("CORS with a list of origins: a listed origin is echoed, another gets no header [embedded]", async (t) => {
  const context = await startTestGateway("embedded", {
    configOverrides: { cors: { allowed_origins: [ORIGIN, "http://localhost:5173"] } },
  });
  t.after(() => context.close());
  const models = (origin: string) => fetch(`${context.url}/api/v1/models`, { headers: { Origin: origin } });

  const listed = await models(ORIGIN);
  assert.equal(listed.status, 200);
  assertReadableCrossOrigin(listed, ORIGIN, "listed origin");
  assert.match(listed.headers.get("vary") ?? "", /origin/i);

  const other = await models("https://evil.example.net");
  assert.equal(other.status, 200, "answered, but the browser will not let the page read it");
  assertNoCors(other, "unlisted origin");
  assert.match(other.headers.get("vary") ?? "", /origin/i);

  const listedPreflight = await preflight(`${context.url}/api/v1/responses`, "http://localhost:5173");
  assert.equal(listedPreflight.status, 204);
  assert.equal(listedPreflight.headers.get("access-control-allow-origin"), "http://localhost:5173");
  assert.equal(listedPreflight.headers.get("access-control-allow-headers"), REQUESTED_HEADERS);

  const otherPreflight = await preflight(`${context.url}/api/v1/responses`, "https://evil.example.net");
  assert.equal(otherPreflight.status, 204);
  assertNoCors(otherPreflight, "unlisted preflight");
});

test("CORS turned off with an empty list: OPTIONS is 405 and answers carry no CORS header [embedded]", async (t) => {
  const context = await startTestGateway("embedded", { configOverrides: { cors: { allowed_origins: [] } } });
  t.after(() => context.close());
  const answer = await preflight(`${context.url}/api/v1/chat/completions`);
  assert.equal(answer.status, 405);
  assertNoCors(answer, "preflight with CORS off");
  const models = await fetch(`${context.url}/api/v1/models`, { headers: { Origin: ORIGIN } });
  assert.equal(models.status, 200);
  assertNoCors(models, "answer with CORS off");
});
