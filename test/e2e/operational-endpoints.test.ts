/** Health, readiness, catalog, OpenAPI, request ids, keep-alive and disconnect billing. */
import assert from "node:assert/strict";
import { buildChunk, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function chatRequest(context: TestGateway, body: unknown, signal?: AbortSignal) {
  return fetch(`${context.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

forEachGatewayMode(
  "operational endpoints",
  async (context, t) => {
    await t.test("GET /healthz and /readyz", async () => {
      const health = await fetch(`${context.url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: "ok" });
      assert.ok(health.headers.get("x-request-id"));
      const ready = await fetch(`${context.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: "ok", checks: { redis: "ok", postgres: "ok" } });
    });

    await t.test("GET /api/v1/models lists the catalog with meta", async () => {
      const response = await fetch(`${context.url}/api/v1/models`);
      assert.equal(response.status, 200);
      const body = (await response.json()) as {
        data: Array<Record<string, unknown>>;
        meta: Record<string, unknown>;
      };
      assert.deepEqual(body.meta, { image_generation_configured: false });
      const model = body.data.find((entry) => entry.slug === TEST_MODEL)!;
      assert.deepEqual(model.pricing, { prompt: 2, completion: 8, cached_prompt: 0.5 });
      assert.equal(model.context_length, 128_000);
      assert.equal(model.max_output_tokens, 4096);
      assert.equal(model.release_date, "2026-01-01");
      assert.deepEqual(model.provider, { slug: "test", name: "Test" });
      assert.deepEqual(model.benchmarks, []);
      assert.equal("routes" in model, false, "routing is not public");
    });

    await t.test("GET /openapi.json: OpenAPI 3.1, cacheable 5 minutes, every endpoint", async () => {
      const response = await fetch(`${context.url}/openapi.json`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get("cache-control") ?? "", /max-age=300/);
      const document = (await response.json()) as {
        openapi: string;
        info: { version: string };
        paths: Record<string, Record<string, unknown>>;
        components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
      };
      assert.equal(document.openapi, "3.1.0");
      assert.equal(document.info.version, "1");
      for (const [path, method] of [
        ["/api/v1/chat/completions", "post"],
        ["/api/v1/responses", "post"],
        ["/api/v1/messages", "post"],
        ["/api/v1/messages/count_tokens", "post"],
        ["/api/v1/key", "get"],
        ["/api/v1/playground-keys", "post"],
        ["/internal/admin/keys", "post"],
        ["/internal/admin/keys/{id}/revoke", "post"],
        ["/internal/admin/workspaces/{id}/credit", "post"],
        ["/api/v1/models", "get"],
        ["/api/v1/models/{slug}", "get"],
        ["/api/v1/generation", "get"],
        ["/healthz", "get"],
        ["/readyz", "get"],
        ["/openapi.json", "get"],
      ]) {
        assert.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path} is described`);
      }
      const chat = document.components.schemas.ChatCompletionRequest;
      assert.ok(chat.properties?.messages && chat.properties.temperature && chat.properties.plugins);
    });

    await t.test("X-Request-Id on 404s and errors; 404 in the common envelope", async () => {
      const response = await fetch(`${context.url}/api/v1/nothing-here`);
      assert.equal(response.status, 404);
      const requestId = response.headers.get("x-request-id");
      assert.ok(requestId);
      const body = (await response.json()) as { error: { code: string; request_id: string } };
      assert.equal(body.error.code, "invalid_request");
      assert.equal(body.error.request_id, requestId);
    });

    await t.test(
      "quiet streams get keep-alive comments; the generation record exists while running",
      async () => {
        context.upstream.enqueue(
          fakeReply.sse([
            buildChunk({ role: "assistant", content: "" }),
            { delayMs: 350 },
            ...buildTextChunks(["late"]).slice(1),
          ]),
        );
        const response = await chatRequest(context, {
          model: TEST_MODEL,
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        });
        const requestId = response.headers.get("x-request-id")!;
        const inProgress = await fetch(`${context.url}/api/v1/generation?id=${requestId}`, {
          headers: { Authorization: `Bearer ${context.apiKey}` },
        });
        assert.equal(inProgress.status, 200, "the record exists as soon as the id is returned");
        const text = await response.text();
        assert.match(text, /\n: keep-alive\n\n/);
        assert.match(text, /data: \[DONE\]\n\n$/);
      },
    );

    await t.test(
      "client disconnect mid-stream: upstream cancelled, delivered output billed, status cancelled",
      async () => {
        const before = (await context.gateway.store.workspaces.get(context.workspaceId))!.balanceMicroUsd;
        context.upstream.enqueue(
          fakeReply.sse([
            buildChunk({ role: "assistant", content: "" }),
            buildChunk({ content: "The quick brown fox jumps over the lazy dog. ".repeat(20) }),
            { hang: true },
          ]),
        );
        const controller = new AbortController();
        const response = await chatRequest(
          context,
          { model: TEST_MODEL, messages: [{ role: "user", content: "Tell me a story" }], stream: true },
          controller.signal,
        );
        const requestId = response.headers.get("x-request-id")!;
        const reader = response.body!.getReader();
        let received = "";
        while (!received.includes("quick brown fox")) {
          const { value } = await reader.read();
          received += new TextDecoder().decode(value);
        }
        controller.abort();
        const upstreamRequest = context.upstream.requests.at(-1)!;
        await upstreamRequest.closed;
        assert.equal(upstreamRequest.closedBeforeEnd, true, "the upstream request was aborted");
        const generation = await waitFor(async () => {
          const record = await context.gateway.store.generations.get(requestId, context.workspaceId);
          return record && record.status !== "in_progress" ? record : undefined;
        });
        assert.equal(generation.status, "cancelled");
        assert.ok(
          (generation.tokensCompletion ?? 0) >= 150,
          `estimated output tokens: ${generation.tokensCompletion}`,
        );
        assert.ok((generation.costMicroUsd ?? 0) > 0);
        const after = (await context.gateway.store.workspaces.get(context.workspaceId))!.balanceMicroUsd;
        assert.equal(after, before - (generation.costMicroUsd ?? 0));
      },
    );

    await t.test("readiness turns 503 when a dependency is down", async () => {
      await context.gateway.state.close();
      const ready = await fetch(`${context.url}/readyz`);
      const body = (await ready.json()) as { status: string; checks: Record<string, string> };
      if (context.mode === "distributed") {
        assert.equal(ready.status, 503);
        assert.deepEqual(body, { status: "degraded", checks: { redis: "down", postgres: "ok" } });
      }
      await context.gateway.store.close();
      const down = await fetch(`${context.url}/readyz`);
      assert.equal(down.status, 503);
      assert.equal(((await down.json()) as { checks: { postgres: string } }).checks.postgres, "down");
    });
  },
  { keepAliveMs: 100 },
);
