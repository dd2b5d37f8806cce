/**
 * The Chat Completions path end to end, driven by the official `openai` client against a real
 * gateway and a loopback upstream that speaks the exact wire format — in embedded mode and on
 * PostgreSQL + Redis.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import {
  buildChatCompletion,
  buildChunk,
  buildTextChunks,
  buildUsageChunk,
  fakeReply,
} from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

async function getGeneration(context: TestGateway, id: string) {
  const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
    headers: { Authorization: `Bearer ${context.apiKey}` },
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

async function getBalance(context: TestGateway): Promise<number> {
  const workspace = await context.gateway.store.workspaces.get(context.workspaceId);
  return workspace!.balanceMicroUsd;
}

forEachGatewayMode("chat completions through the official openai client", async (context, t) => {
  await t.test("non-streaming text: response shape, cost, generation record, balance", async () => {
    const before = await getBalance(context);
    context.upstream.enqueue(
      fakeReply.json(
        buildChatCompletion({
          content: "Bonjour!",
          usage: {
            prompt_tokens: 1000,
            completion_tokens: 200,
            total_tokens: 1200,
            prompt_tokens_details: { cached_tokens: 400 },
            completion_tokens_details: { reasoning_tokens: 50 },
          },
        }),
      ),
    );
    const { data, response } = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "Say hello in French" }] })
      .withResponse();
    const requestId = response.headers.get("x-request-id")!;
    assert.ok(requestId);
    assert.equal(data.id, `gen-${requestId}`);
    assert.equal(data.object, "chat.completion");
    assert.equal(data.model, TEST_MODEL);
    assert.equal(data.choices[0].message.content, "Bonjour!");
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.equal(data.usage?.prompt_tokens, 1000);
    assert.equal(data.usage?.completion_tokens, 200);
    assert.equal(data.usage?.prompt_tokens_details?.cached_tokens, 400);
    assert.equal(data.usage?.completion_tokens_details?.reasoning_tokens, 50);
    // 600 × $2/M + 400 × $0.5/M + 200 × $8/M = 1200 + 200 + 1600 µ$ = $0.003
    const cost = (data.usage as unknown as { cost: number }).cost;
    assert.equal(cost, 0.003);

    const upstreamRequest = context.upstream.requests.at(-1)!;
    assert.equal(upstreamRequest.path, "/v1/chat/completions");
    assert.equal(upstreamRequest.body.model, "fake-upstream-model");
    assert.equal(upstreamRequest.body.max_completion_tokens, 4096, "defaults to the model's maximum output");
    assert.equal(upstreamRequest.headers.authorization, "Bearer sk-upstream-secret");

    const generation = await getGeneration(context, requestId);
    assert.equal(generation.id, requestId);
    assert.equal(generation.status, "ok");
    assert.equal(generation.source, "api");
    assert.equal(generation.ingress_format, "chat_completions");
    assert.equal(generation.model, TEST_MODEL);
    assert.equal(generation.tokens_prompt, 1000);
    assert.equal(generation.tokens_completion, 200);
    assert.equal(generation.tokens_reasoning, 50);
    assert.equal(generation.tokens_cached_prompt, 400);
    assert.equal(generation.cost_micro_usd, "3000");
    assert.equal(generation.total_cost, 0.003);
    assert.equal(generation.error_code, null);
    assert.equal(typeof generation.latency_ms, "number");
    assert.equal(await getBalance(context), before - 3000);
  });

  await t.test(
    "a generation path with a query or a percent-encoded letter is served by the same route",
    async () => {
      // `%63` is "c": the router decodes the path before matching it.
      for (const path of ["/api/v1/chat/completions?x=1", "/api/v1/%63hat/completions"]) {
        context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "same" })));
        const response = await fetch(`${context.url}${path}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
          body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
        });
        assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
        const requestId = response.headers.get("x-request-id");
        assert.ok(requestId, path);
        const body = (await response.json()) as {
          id: string;
          choices: Array<{ message: { content: string } }>;
        };
        assert.equal(body.id, `gen-${requestId}`, path);
        assert.equal(body.choices[0]!.message.content, "same", path);
        assert.equal((await getGeneration(context, requestId)).id, requestId, path);
      }
    },
  );

  await t.test("streaming text: role frame, deltas, finish, usage chunk with cost, [DONE]", async () => {
    context.upstream.enqueue(
      fakeReply.sse(
        buildTextChunks(["Hel", "lo", " world"], {
          usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        }),
      ),
    );
    const stream = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join(""), "Hello world");
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage?.prompt_tokens, 12);
    assert.equal((last.usage as unknown as { cost: number }).cost, 0.000048); // 24 + 24 µ$
    assert.equal(chunks.at(-2)!.choices[0].finish_reason, "stop");
    const ids = new Set(chunks.map((chunk) => chunk.id));
    assert.equal(ids.size, 1);
    const upstreamRequest = context.upstream.requests.at(-1)!;
    assert.equal(upstreamRequest.body.stream, true);
    assert.deepEqual(upstreamRequest.body.stream_options, { include_usage: true });
    const generation = await getGeneration(context, [...ids][0].slice("gen-".length));
    assert.equal(generation.status, "ok");
    assert.equal(generation.cost_micro_usd, "48");
  });

  await t.test(
    "stream_options.include_usage of any value is accepted: the usage chunk comes anyway",
    async () => {
      context.upstream.enqueue(
        fakeReply.sse(
          buildTextChunks(["ok"], { usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
        ),
      );
      const stream = await context.openai.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: "yes" as unknown as boolean },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.equal(chunks.at(-1)!.usage?.prompt_tokens, 5);
      assert.deepEqual(context.upstream.requests.at(-1)!.body.stream_options, { include_usage: true });
    },
  );

  await t.test("streamed parallel tool calls survive with exact arguments (stream helper)", async () => {
    const first = '{"city":"Paris","unit":"c"}';
    const second = '{"city":"Tokyo, \\"JP\\""}';
    context.upstream.enqueue(
      fakeReply.sse([
        buildChunk({ role: "assistant", content: null }),
        buildChunk({
          tool_calls: [
            { index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } },
          ],
        }),
        buildChunk({ tool_calls: [{ index: 0, function: { arguments: first.slice(0, 9) } }] }),
        buildChunk({
          tool_calls: [
            { index: 1, id: "call_b", type: "function", function: { name: "get_weather", arguments: "" } },
          ],
        }),
        buildChunk({ tool_calls: [{ index: 1, function: { arguments: second.slice(0, 5) } }] }),
        buildChunk({ tool_calls: [{ index: 0, function: { arguments: first.slice(9) } }] }),
        buildChunk({ tool_calls: [{ index: 1, function: { arguments: second.slice(5) } }] }),
        buildChunk({}, { finishReason: "tool_calls" }),
        buildUsageChunk({ prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 }),
      ]),
    );
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    const runner = context.openai.chat.completions.stream({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "Weather in Paris and Tokyo?" }],
      tools,
      parallel_tool_calls: true,
    });
    const completion = await runner.finalChatCompletion();
    const calls = completion.choices[0].message.tool_calls!;
    assert.equal(completion.choices[0].finish_reason, "tool_calls");
    assert.equal(calls.length, 2);
    assert.deepEqual(
      calls.map((call) =>
        call.type === "function" ? [call.id, call.function.name, call.function.arguments] : [],
      ),
      [
        ["call_a", "get_weather", first],
        ["call_b", "get_weather", second],
      ],
    );
    const upstreamBody = context.upstream.requests.at(-1)!.body;
    assert.equal(upstreamBody.tools[0].function.name, "get_weather");
    assert.equal(upstreamBody.parallel_tool_calls, true);
  });

  await t.test("tool round trip: assistant tool_calls and tool results reach the upstream", async () => {
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "It is 21°C in Paris." })));
    const completion = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_a",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_a", content: '{"temp_c":21}' },
      ],
    });
    assert.equal(completion.choices[0].message.content, "It is 21°C in Paris.");
    const messages = context.upstream.requests.at(-1)!.body.messages;
    assert.deepEqual(messages[0], { role: "system", content: "Be brief." });
    assert.equal(messages[2].tool_calls[0].function.arguments, '{"city":"Paris"}');
    assert.equal(messages[3].role, "tool");
    assert.equal(messages[3].tool_call_id, "call_a");
    assert.equal(messages[3].content, '{"temp_c":21}');
  });

  await t.test("images, reasoning text and unknown top-level fields survive the trip", async () => {
    context.upstream.enqueue(
      fakeReply.sse([
        buildChunk({ role: "assistant", content: "" }),
        buildChunk({ reasoning_content: "Looking at the picture" }),
        buildChunk({ content: "A cat." }),
        buildChunk({}, { finishReason: "stop" }),
        buildUsageChunk({
          prompt_tokens: 100,
          completion_tokens: 40,
          total_tokens: 140,
          completion_tokens_details: { reasoning_tokens: 30 },
        }),
      ]),
    );
    const stream = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      stream: true,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
          ],
        },
      ],
      // Unknown to the spec: forwarded verbatim.
      ...({ provider: { order: ["fake"] }, prompt_cache_key: "k1" } as object),
    });
    let reasoning = "";
    let content = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning?: string } | undefined;
      reasoning += delta?.reasoning ?? "";
      content += delta?.content ?? "";
      usage = chunk.usage ?? usage;
    }
    assert.equal(reasoning, "Looking at the picture");
    assert.equal(content, "A cat.");
    assert.equal(usage?.completion_tokens_details?.reasoning_tokens, 30);
    const body = context.upstream.requests.at(-1)!.body;
    assert.deepEqual(body.provider, { order: ["fake"] });
    assert.equal(body.prompt_cache_key, "k1");
    assert.deepEqual(body.messages[0].content[1], {
      type: "image_url",
      image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
    });
  });

  await t.test("upstream 429 → provider_rate_limit with Retry-After, recorded, not billed", async () => {
    const before = await getBalance(context);
    context.upstream.enqueue(
      fakeReply.error(
        429,
        { error: { message: "Rate limit reached", type: "rate_limit_error" } },
        { "retry-after": "7" },
      ),
    );
    const error = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] })
      .then(
        () => assert.fail("expected an error"),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.status, 429);
    assert.equal(error.headers?.get("retry-after"), "7");
    const body = error.error as { code: string; retry_after_seconds: number; request_id: string };
    assert.equal(body.code, "provider_rate_limit");
    assert.equal(body.retry_after_seconds, 7);
    const generation = await getGeneration(context, body.request_id);
    assert.equal(generation.status, "error");
    assert.equal(generation.error_code, "provider_rate_limit");
    assert.equal(generation.cost_micro_usd, "0");
    assert.equal(await getBalance(context), before);
  });

  await t.test("streamed request failing before output gets a plain HTTP error", async () => {
    // Down for the first try and the retry (routing.retries, default 1): the run gives up.
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "unavailable" } }));
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "unavailable" } }));
    const error = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }], stream: true })
      .then(
        () => assert.fail("expected an error"),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 502);
    assert.equal((error.error as { code: string }).code, "provider_unavailable");
  });

  await t.test("error mid-stream reaches the SDK as an APIError after the delivered text", async () => {
    context.upstream.enqueue(
      fakeReply.sse(
        [
          buildChunk({ role: "assistant", content: "" }),
          buildChunk({ content: "partial" }),
          { data: { error: { message: "The server had an error", type: "server_error" } } },
        ],
        { done: false },
      ),
    );
    const stream = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    let text = "";
    await assert.rejects(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    }, OpenAI.APIError);
    assert.equal(text, "partial");
  });

  await t.test("output cap reached maps to finish_reason length", async () => {
    context.upstream.enqueue(
      fakeReply.json(buildChatCompletion({ content: "truncat", finishReason: "length" })),
    );
    const completion = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "long story" }],
      max_tokens: 3,
    });
    assert.equal(completion.choices[0].finish_reason, "length");
    assert.equal(context.upstream.requests.at(-1)!.body.max_completion_tokens, 3);
  });
});
