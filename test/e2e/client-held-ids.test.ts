/**
 * The ids and paths clients hold: response ids in the generation lookup (with the key in Bearer or
 * x-api-key), the catalog through the openai SDK's models API, and 405 (not 404) for a method a
 * path does not serve.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { OTHER_MODEL, startTestGateway, TEST_MODEL } from "../helpers/test-gateway.js";

test("ids and paths clients hold [embedded]", async (t) => {
  const context = await startTestGateway("embedded");
  t.after(() => context.close());
  const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
  const lookUp = (id: string, headers: Record<string, string>) =>
    fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, { headers });

  await t.test(
    "the generation lookup takes gen-, resp_ and msg_ ids, the key in Bearer or x-api-key",
    async () => {
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "one" })));
      const completion = await context.openai.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: "hi" }],
      });
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "two" })));
      const response = await context.openai.responses.create({ model: TEST_MODEL, input: "hi" });
      context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "three" })));
      const message = await anthropic.messages.create({
        model: TEST_MODEL,
        max_tokens: 50,
        messages: [{ role: "user", content: "hi" }],
      });
      const cases: Array<[string, string, Record<string, string>]> = [
        [completion.id, "chat_completions", { Authorization: `Bearer ${context.apiKey}` }],
        [response.id, "responses", { Authorization: `Bearer ${context.apiKey}` }],
        [message.id, "anthropic_messages", { "x-api-key": context.apiKey }],
      ];
      for (const [id, format, headers] of cases) {
        const answer = await lookUp(id, headers);
        assert.equal(answer.status, 200, `${id}: ${await answer.clone().text()}`);
        const { data } = (await answer.json()) as { data: { id: string; ingress_format: string } };
        assert.equal(data.ingress_format, format);
        assert.equal(id.endsWith(data.id), true, `${id} carries the request id ${data.id}`);
        const bare = await lookUp(data.id, { "x-api-key": context.apiKey });
        assert.equal(bare.status, 200, "the bare request id still works");
      }
      const wrongKey = await lookUp(message.id, { "x-api-key": "hi-not-a-key" });
      assert.equal(wrongKey.status, 401);
      const unknown = await lookUp(`resp_${"A".repeat(22)}`, { "x-api-key": context.apiKey });
      assert.equal(unknown.status, 400);
      assert.equal(((await unknown.json()) as { error: { param: string } }).error.param, "id");
    },
  );

  await t.test("openai.models.list() yields the slugs as ids; models.retrieve finds one", async () => {
    const ids: string[] = [];
    for await (const model of context.openai.models.list()) ids.push(model.id);
    assert.deepEqual(ids, [TEST_MODEL, OTHER_MODEL]);
    const model = await context.openai.models.retrieve(OTHER_MODEL);
    assert.equal(model.id, OTHER_MODEL);
    assert.equal((model as unknown as { slug: string }).slug, OTHER_MODEL);
    const plain = await fetch(`${context.url}/api/v1/models/${TEST_MODEL}`);
    assert.equal(plain.status, 200, "the slash may also come unencoded");
    assert.equal(((await plain.json()) as { id: string }).id, TEST_MODEL);
    await assert.rejects(
      context.openai.models.retrieve("test/no-such-model"),
      (error: unknown) =>
        error instanceof OpenAI.NotFoundError &&
        (error.error as { code: string; param: string }).code === "invalid_request" &&
        (error.error as { param: string }).param === "slug",
    );
  });

  await t.test("a method a path does not serve gets 405 with Allow, in the common envelope", async () => {
    const cases: Array<[string, string, string]> = [
      ["GET", "/api/v1/chat/completions", "POST"],
      ["GET", "/api/v1/responses", "POST"],
      ["PUT", "/api/v1/messages", "POST"],
      ["POST", "/api/v1/models", "GET, HEAD"],
      ["DELETE", `/api/v1/models/${TEST_MODEL}`, "GET, HEAD"],
      ["POST", "/api/v1/generation", "GET, HEAD"],
      ["POST", "/healthz", "GET, HEAD"],
      ["GET", "/api/v1/playground-keys", "POST"],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await fetch(context.url + path, { method });
      assert.equal(answer.status, 405, `${method} ${path}`);
      assert.equal(answer.headers.get("allow"), allow, `${method} ${path}`);
      const body = (await answer.json()) as { error: { code: string; request_id: string } };
      assert.equal(body.error.code, "invalid_request");
      assert.equal(body.error.request_id, answer.headers.get("x-request-id"));
    }
    const admin = await fetch(`${context.url}/internal/admin/workspaces`, {
      method: "DELETE",
      headers: { "X-Internal-Token": context.gateway.internalSecret },
    });
    assert.equal(admin.status, 405, "admin paths too");
    assert.equal(admin.headers.get("allow"), "GET, HEAD, POST");
    const nowhere = await fetch(`${context.url}/api/v1/nothing-here`, { method: "POST" });
    assert.equal(nowhere.status, 404, "a path served under no method stays 404");
  });
});
