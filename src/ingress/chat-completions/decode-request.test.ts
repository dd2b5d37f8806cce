import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { decodeChatRequest } from "./decode-request.js";

const minimal = { model: "openai/gpt-4o", messages: [{ role: "user", content: "Hi" }] };

function decodeWith(extra: Record<string, unknown>) {
  return decodeChatRequest({ ...minimal, ...extra });
}

/** Asserts the body is rejected as invalid_request naming `param`; returns the message. */
function assertRejected(body: unknown, param: string | null, messagePattern?: RegExp): string {
  let caught: unknown;
  try {
    decodeChatRequest(body);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof GatewayError, `expected a GatewayError for ${JSON.stringify(body)}`);
  assert.equal(caught.code, "invalid_request");
  assert.equal(caught.status, 400);
  assert.equal(caught.param, param);
  if (messagePattern) assert.match(caught.message, messagePattern);
  return caught.message;
}

test("a minimal request decodes to a canonical request with defaults", () => {
  assert.deepEqual(decodeChatRequest(minimal), {
    model: "openai/gpt-4o",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
    passthroughFormat: "chat_completions",
  });
});

test("system and developer messages become the system prompt in order, hoisted from anywhere", () => {
  const request = decodeWith({
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "developer", content: [{ type: "text", text: "Use metric units." }] },
      { role: "assistant", content: "Hello" },
      { role: "system", content: "" },
    ],
  });
  assert.deepEqual(request.system, [
    { type: "text", text: "Be brief." },
    { type: "text", text: "Use metric units." },
  ]);
  assert.deepEqual(
    request.messages.map((message) => message.role),
    ["user", "assistant"],
  );
});

test("user content parts: text, image URL, image data URL, file data and file URL", () => {
  const request = decodeWith({
    messages: [
      {
        role: "user",
        name: "alice",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "high" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
          { type: "file", file: { file_url: "https://example.com/b.pdf" } },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[0], {
    role: "user",
    name: "alice",
    content: [
      { type: "text", text: "Look" },
      { type: "image", source: { kind: "url", url: "https://example.com/a.png" }, detail: "high" },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
      {
        type: "file",
        source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
        filename: "a.pdf",
        param: "messages[0].content[3]",
      },
      {
        type: "file",
        source: { kind: "url", url: "https://example.com/b.pdf" },
        param: "messages[0].content[4]",
      },
    ],
  });
});

test("assistant turns: blank text dropped, reasoning first, tool-call arguments byte-exact", () => {
  const args = '{ "city" : "Paris",\n"unit":"c" }';
  const request = decodeWith({
    messages: [
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "  \n",
        refusal: null,
        reasoning: "The user wants weather.",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: args } }],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Sunny." },
          { type: "text", text: " " },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[1], {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user wants weather." },
      { type: "tool-call", id: "call_1", name: "get_weather", arguments: args },
    ],
  });
  assert.deepEqual(request.messages[2], { role: "assistant", content: [{ type: "text", text: "Sunny." }] });
});

test("a replayed answer's annotations, in any service's shape or null, are accepted and reach no upstream", () => {
  const replays: unknown[] = [
    [
      {
        type: "url_citation",
        url_citation: { url: "https://a.test", title: "A", start_index: 0, end_index: 5, content: "[...]" },
      },
    ],
    [{ type: "url_citation", url: "https://a.test", start_index: 0, end_index: 5 }],
    [{ type: "file_citation", file_id: "file_1" }],
    [],
    null,
  ];
  for (const annotations of replays) {
    const request = decodeWith({
      messages: [
        { role: "user", content: "Capital?" },
        { role: "assistant", content: "Paris.", refusal: null, annotations },
        { role: "user", content: "Thanks" },
      ],
    });
    assert.deepEqual(request.messages[1], { role: "assistant", content: [{ type: "text", text: "Paris." }] });
    assert.equal(JSON.stringify(request).includes("annotations"), false, JSON.stringify(annotations));
  }
});

test("assistant reasoning_details restore provider state on reasoning and tool calls", () => {
  const request = decodeWith({
    messages: [
      { role: "user", content: "Hi" },
      {
        role: "assistant",
        content: null,
        reasoning: "Thinking about it.Hidden",
        reasoning_details: [
          {
            type: "reasoning.text",
            provider_kind: "anthropic",
            upstream_model: "claude-sonnet-4-5",
            text: "Thinking about it.",
            signature: "sig-1",
          },
          {
            type: "reasoning.encrypted",
            provider_kind: "anthropic",
            upstream_model: "claude-sonnet-4-5",
            data: "R3D",
          },
          {
            type: "reasoning.encrypted",
            provider_kind: "google",
            upstream_model: "gemini-3-pro",
            signature: "g-sig",
            tool_call_id: "call_9",
          },
        ],
        tool_calls: [{ id: "call_9", type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ],
  });
  assert.deepEqual(request.messages[1].content, [
    {
      type: "reasoning",
      text: "Thinking about it.",
      providerState: { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", signature: "sig-1" },
    },
    {
      type: "reasoning",
      text: "",
      providerState: { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", redactedData: "R3D" },
    },
    {
      type: "tool-call",
      id: "call_9",
      name: "f",
      arguments: "{}",
      providerState: { providerKind: "google", upstreamModel: "gemini-3-pro", signature: "g-sig" },
    },
  ]);
});

test("consecutive tool messages become one canonical tool message each", () => {
  const request = decodeWith({
    messages: [
      { role: "user", content: "Go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "g", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "result a" },
      {
        role: "tool",
        tool_call_id: "b",
        content: [
          { type: "text", text: "result b" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/" } },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages.slice(2), [
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "a", content: [{ type: "text", text: "result a" }] }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "b",
          content: [
            { type: "text", text: "result b" },
            { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: "/9j/" } },
          ],
        },
      ],
    },
  ]);
});

test("every sampling, output and format field maps to its canonical name", () => {
  const request = decodeWith({
    max_tokens: 100,
    max_completion_tokens: 50,
    temperature: 0.7,
    top_p: 0.9,
    min_p: 0.05,
    top_a: 0.1,
    frequency_penalty: -0.5,
    presence_penalty: 1.5,
    repetition_penalty: 1.1,
    seed: 42,
    logit_bias: { "50256": -100 },
    logprobs: true,
    top_logprobs: 3,
    stop: "END",
    response_format: {
      type: "json_schema",
      json_schema: { name: "answer", schema: { type: "object" }, strict: true, description: "An answer" },
    },
    reasoning_effort: "xhigh",
    verbosity: "low",
    user: "user-123",
    stream: true,
    stream_options: { include_usage: false },
    parallel_tool_calls: false,
    n: 1,
    modalities: ["text"],
  });
  assert.equal(request.maxOutputTokens, 50);
  assert.deepEqual(request.sampling, {
    temperature: 0.7,
    topP: 0.9,
    minP: 0.05,
    topA: 0.1,
    frequencyPenalty: -0.5,
    presencePenalty: 1.5,
    repetitionPenalty: 1.1,
    seed: 42,
    logitBias: { "50256": -100 },
    logprobs: true,
    topLogprobs: 3,
  });
  assert.deepEqual(request.stop, ["END"]);
  assert.deepEqual(request.responseFormat, {
    type: "json_schema",
    name: "answer",
    schema: { type: "object" },
    strict: true,
    description: "An answer",
  });
  assert.deepEqual(request.reasoning, { effort: "xhigh" });
  assert.equal(request.verbosity, "low");
  assert.equal(request.user, "user-123");
  assert.equal(request.stream, true);
  assert.equal(request.parallelToolCalls, false);
  assert.deepEqual(request.passthrough, {}, "stream_options is accepted but not passed through");
});

test("max_tokens alone sets the output cap; stop arrays and simple response formats pass", () => {
  const request = decodeWith({ max_tokens: 7, stop: ["a", "b"], response_format: { type: "json_object" } });
  assert.equal(request.maxOutputTokens, 7);
  assert.deepEqual(request.stop, ["a", "b"]);
  assert.deepEqual(request.responseFormat, { type: "json_object" });
});

test("null optional fields count as absent", () => {
  const request = decodeWith({
    temperature: null,
    tools: null,
    stop: null,
    service_tier: null,
    audio: null,
    n: null,
  });
  assert.deepEqual(request.sampling, {});
  assert.equal(request.stop, undefined);
});

test("function tools and tool_choice", () => {
  const tools = [
    {
      type: "function",
      function: { name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true },
    },
    { type: "function", function: { name: "noop" } },
  ];
  const request = decodeWith({ tools, tool_choice: { type: "function", function: { name: "noop" } } });
  assert.deepEqual(request.tools, [
    {
      name: "get_weather",
      description: "Weather",
      parameters: { type: "object" },
      strict: true,
      param: "tools[0]",
    },
    { name: "noop", param: "tools[1]" },
  ]);
  assert.deepEqual(request.toolChoice, { type: "tool", name: "noop" });
  assert.deepEqual(decodeWith({ tools, tool_choice: "required" }).toolChoice, { type: "required" });
  assert.deepEqual(decodeWith({ tools, tool_choice: "none" }).toolChoice, { type: "none" });
  assert.deepEqual(decodeWith({ tools, tool_choice: "auto" }).toolChoice, { type: "auto" });
});

test("server tools from tools, plugins and web_search_options, with defaults and merging", () => {
  const request = decodeWith({
    tools: [
      { type: "function", function: { name: "f" } },
      { type: "hi:web_fetch", max_uses: 3, parameters: { max_bytes: 1000 } },
      { type: "openrouter:datetime" },
    ],
    plugins: [
      { id: "pdf", events: true, engine: "text" },
      { id: "web_search", max_uses: 5 },
    ],
    web_search_options: {
      search_context_size: "high",
      user_location: { type: "approximate", approximate: { city: "Lyon", country: "FR" } },
    },
    hi_tool_events: true,
  });
  assert.deepEqual(request.tools, [{ name: "f", param: "tools[0]" }]);
  assert.deepEqual(request.serverTools, [
    {
      id: "web_fetch",
      maxUses: 3,
      events: false,
      parameters: { max_bytes: 1000 },
      param: "tools[1]",
      optional: true,
    },
    { id: "datetime", maxUses: 1000, events: false, param: "tools[2]", optional: true },
    { id: "pdf", maxUses: 1000, events: true, parameters: { engine: "text" }, param: "plugins[0]" },
    {
      id: "web_search",
      maxUses: 5,
      events: false,
      param: "plugins[1]",
      parameters: {
        search_context_size: "high",
        user_location: { type: "approximate", approximate: { city: "Lyon", country: "FR" } },
      },
    },
  ]);
  assert.equal(request.toolEvents, true);
});

test("a server tool activated twice is one activation with the smallest max_uses", () => {
  const request = decodeWith({
    tools: [{ type: "hi:web_search", max_uses: 8 }],
    plugins: [{ id: "web_search", max_uses: 2, events: true }],
    web_search_options: {},
  });
  assert.deepEqual(request.serverTools, [{ id: "web_search", maxUses: 2, events: true, param: "tools[0]" }]);
});

test("unknown top-level fields pass through verbatim; known ones do not", () => {
  const provider = { order: ["anthropic", "openai"], allow_fallbacks: false };
  const request = decodeWith({
    provider,
    transforms: ["middle-out"],
    metadata: { a: "1" },
    store: false,
    prompt_cache_key: "k",
    safety_identifier: "s",
    reasoning: { effort: "high" },
    temperature: 1,
  });
  assert.deepEqual(request.passthrough, {
    provider,
    transforms: ["middle-out"],
    metadata: { a: "1" },
    store: false,
    prompt_cache_key: "k",
    safety_identifier: "s",
    reasoning: { effort: "high" },
  });
  assert.equal(request.passthrough.provider, provider, "the very value, not a copy");
});

test("prediction is validated and forwarded (it has no canonical field)", () => {
  const prediction = { type: "content", content: "draft" };
  assert.deepEqual(decodeWith({ prediction }).passthrough, { prediction });
  assertRejected({ ...minimal, prediction: { type: "other", content: "x" } }, "prediction.type");
});

test("rejected features name their field", () => {
  assertRejected({ ...minimal, service_tier: "auto" }, "service_tier", /not supported/);
  assertRejected({ ...minimal, service_tier: "default" }, "service_tier");
  assertRejected({ ...minimal, n: 2 }, "n");
  assertRejected({ ...minimal, audio: { voice: "alloy", format: "mp3" } }, "audio");
  assertRejected({ ...minimal, modalities: ["text", "audio"] }, "modalities");
  assertRejected({ ...minimal, top_logprobs: 2 }, "top_logprobs", /requires logprobs/);
  assertRejected({ ...minimal, top_logprobs: 2, logprobs: false }, "top_logprobs");
  assertRejected(
    { ...minimal, messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-abc" } }] }] },
    "messages[0].content[0].file.file_id",
    /use file_data or file_url/,
  );
  assertRejected(
    {
      ...minimal,
      messages: [
        { role: "user", content: "x" },
        { role: "tool", content: "r" },
      ],
    },
    "messages[1].tool_call_id",
    /required/,
  );
  assertRejected(
    {
      ...minimal,
      tools: [{ type: "function", function: { name: "a" } }],
      tool_choice: { type: "function", function: { name: "b" } },
    },
    "tool_choice",
    /"b"/,
  );
  assertRejected({ ...minimal, tool_choice: { type: "function", function: { name: "b" } } }, "tool_choice");
  // The named function is there, under a mistyped type: that type is the field to fix.
  assertRejected(
    {
      ...minimal,
      tools: [{ type: "", function: { name: "b" } }],
      tool_choice: { type: "function", function: { name: "b" } },
    },
    "tools[0].type",
    /tool_choice names "b", but tools\[0\] has type "", which is not a function tool's/,
  );
});

test("range and type errors name the field and say what is wrong", () => {
  assert.equal(
    assertRejected({ ...minimal, temperature: 2.5 }, "temperature"),
    "temperature must be at most 2",
  );
  assert.equal(
    assertRejected({ ...minimal, temperature: -1 }, "temperature"),
    "temperature must be at least 0",
  );
  assertRejected({ ...minimal, temperature: "1" }, "temperature", /must be a number/);
  assertRejected({ ...minimal, top_p: 1.01 }, "top_p", /at most 1/);
  assertRejected({ ...minimal, max_tokens: 0 }, "max_tokens", /greater than 0/);
  assertRejected({ ...minimal, max_completion_tokens: 1.5 }, "max_completion_tokens", /integer/);
  assertRejected({ ...minimal, frequency_penalty: -2.1 }, "frequency_penalty", /at least -2/);
  assertRejected({ ...minimal, presence_penalty: 3 }, "presence_penalty", /at most 2/);
  assertRejected({ ...minimal, repetition_penalty: 2.1 }, "repetition_penalty", /at most 2/);
  assertRejected({ ...minimal, min_p: 1.5 }, "min_p");
  assertRejected({ ...minimal, top_a: -0.1 }, "top_a");
  assertRejected({ ...minimal, seed: 1.5 }, "seed", /integer/);
  assertRejected({ ...minimal, n: 0 }, "n");
  assertRejected({ ...minimal, logit_bias: { "1": 101 } }, "logit_bias.1", /at most 100/);
  assertRejected({ ...minimal, top_logprobs: -1, logprobs: true }, "top_logprobs");
  assertRejected({ ...minimal, reasoning_effort: "extreme" }, "reasoning_effort", /one of none, minimal/);
  assertRejected({ ...minimal, verbosity: "loud" }, "verbosity");
  assertRejected({ ...minimal, stop: 5 }, "stop", /string or an array/);
  assertRejected({ ...minimal, stop: ["a", 1] }, "stop[1]");
  assertRejected({ ...minimal, stream: "yes" }, "stream", /boolean/);
  assertRejected({ ...minimal, response_format: { type: "xml" } }, "response_format.type");
  assertRejected(
    { ...minimal, response_format: { type: "json_schema" } },
    "response_format.json_schema",
    /required/,
  );
  assertRejected(
    { ...minimal, response_format: { type: "json_schema", json_schema: { schema: {} } } },
    "response_format.json_schema.name",
  );
  assertRejected(
    { ...minimal, response_format: { type: "json_schema", json_schema: { name: "x" } } },
    "response_format.json_schema.schema",
  );
  assertRejected({ ...minimal, plugins: [{ id: "web" }] }, "plugins[0].id", /web_search/);
  assertRejected({ ...minimal, plugins: [{ id: "pdf", max_uses: 0 }] }, "plugins[0].max_uses");
  assertRejected(
    { ...minimal, web_search_options: { search_context_size: "huge" } },
    "web_search_options.search_context_size",
  );
  assertRejected(
    { ...minimal, web_search_options: { user_location: { type: "exact", approximate: {} } } },
    "web_search_options.user_location.type",
  );
  assertRejected({ ...minimal, tool_choice: "any" }, "tool_choice", /auto, none, required/);
  assertRejected({ ...minimal, tool_choice: { type: "function" } }, "tool_choice.function", /required/);
  assertRejected(
    { ...minimal, tools: [{ type: "function", function: {} }] },
    "tools[0].function.name",
    /required/,
  );
  assertRejected({ ...minimal, tools: [{ type: "hi:teleport" }] }, "tools[0]");
  assertRejected({ ...minimal, tools: [{ type: "hi:web_search", max_uses: 0 }] }, "tools[0].max_uses");
  assertRejected({ ...minimal, hi_tool_events: "yes" }, "hi_tool_events");
});

test("structural errors name the field", () => {
  assertRejected("hello", null, /JSON object/);
  assertRejected({ messages: minimal.messages }, "model", /model is required/);
  assertRejected({ model: "a/b" }, "messages", /required/);
  assertRejected({ model: "a/b", messages: [] }, "messages", /at least 1 item/);
  assertRejected(
    { model: "a/b", messages: [{ role: "function", content: "x" }] },
    "messages[0].role",
    /one of system/,
  );
  assertRejected({ model: "a/b", messages: [{ role: "user", content: 5 }] }, "messages[0].content");
  assertRejected(
    { model: "a/b", messages: [{ role: "user", content: [{ type: "text", text: 1 }] }] },
    "messages[0].content[0].text",
    /must be a string/,
  );
  assertRejected(
    { model: "a/b", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] },
    "messages[0].content[0].type",
  );
  assertRejected(
    {
      model: "a/b",
      messages: [
        { role: "user", content: [{ type: "image_url", image_url: { url: "x", detail: "ultra" } }] },
      ],
    },
    "messages[0].content[0].image_url.detail",
  );
  assertRejected(
    {
      model: "a/b",
      messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x/y" } }] }],
    },
    "messages[0].content[0].type",
  );
  assertRejected(
    {
      model: "a/b",
      messages: [{ role: "assistant", tool_calls: [{ id: "1", type: "function", function: { name: "f" } }] }],
    },
    "messages[0].tool_calls[0].function.arguments",
  );
});

test("media URLs must be http(s) or base64 data URLs; files need data or a URL", () => {
  const image = (url: string) => ({
    ...minimal,
    messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }],
  });
  assertRejected(image("file:///etc/passwd"), "messages[0].content[0].image_url.url", /http/);
  assertRejected(image("data:image/svg+xml,<svg/>"), "messages[0].content[0].image_url.url", /base64/);
  const file = (body: Record<string, unknown>) => ({
    ...minimal,
    messages: [
      { role: "user", content: "x" },
      { role: "user", content: [{ type: "file", file: body }] },
    ],
  });
  assertRejected(file({ file_data: "JVBERi0=" }), "messages[1].content[0].file.file_data", /data URL/);
  assertRejected(file({ filename: "a.pdf" }), "messages[1].content[0].file", /file_data or file_url/);
  assertRejected(file({ file_url: "ftp://example.com/a.pdf" }), "messages[1].content[0].file.file_url");
});

test("cache_control on content parts becomes canonical cacheControl (system, user text, image, file)", () => {
  const request = decodeWith({
    messages: [
      {
        role: "system",
        content: [{ type: "text", text: "Long context", cache_control: { type: "ephemeral" } }],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "Q", cache_control: { type: "ephemeral", ttl: "1h" } },
          {
            type: "image_url",
            image_url: { url: "https://example.com/i.png" },
            cache_control: { type: "ephemeral" },
          },
          {
            type: "file",
            file: { file_url: "https://example.com/f.pdf" },
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ],
  });
  assert.deepEqual(request.system, [
    { type: "text", text: "Long context", cacheControl: { type: "ephemeral" } },
  ]);
  assert.deepEqual(
    request.messages[0].content.map((part) => ("cacheControl" in part ? part.cacheControl : undefined)),
    [{ type: "ephemeral", ttl: "1h" }, { type: "ephemeral" }, { type: "ephemeral" }],
  );
  assertRejected(
    {
      ...minimal,
      messages: [
        { role: "user", content: [{ type: "text", text: "x", cache_control: { type: "forever" } }] },
      ],
    },
    "messages[0].content[0].cache_control.type",
  );
});
