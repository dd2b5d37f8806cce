import assert from "node:assert/strict";
import { test } from "node:test";
import type { OpaqueReasoningState, ToolResultPart } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { wrapOpaqueState } from "../opaque-state.js";
import { countMessagesTokens } from "./count-messages-tokens.js";
import { decodeMessagesRequest } from "./decode-request.js";

const minimal = {
  model: "anthropic/claude-sonnet-4.5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "Hi" }],
};

function decodeWith(extra: Record<string, unknown>, headers?: Headers) {
  return decodeMessagesRequest({ ...minimal, ...extra }, headers);
}

/** Asserts the body is rejected as invalid_request naming `param`; returns the message. */
function assertRejected(body: unknown, param: string | null, messagePattern?: RegExp): string {
  let caught: unknown;
  try {
    decodeMessagesRequest(body);
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

test("a minimal request decodes to a canonical request with the output cap and defaults", () => {
  assert.deepEqual(decodeMessagesRequest(minimal), {
    model: "anthropic/claude-sonnet-4.5",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
    passthroughFormat: "anthropic_messages",
    maxOutputTokens: 1024,
  });
});

test("sampling, stop sequences, stream, metadata, hi_tool_events and unknown fields", () => {
  const request = decodeWith({
    temperature: 0.3,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["END", "STOP"],
    stream: true,
    metadata: { user_id: "user-7", trace: "abc" },
    hi_tool_events: true,
    cache_control: { type: "ephemeral", ttl: "5m" },
    service_tier: "auto",
  });
  assert.deepEqual(request.sampling, { temperature: 0.3, topP: 0.9, topK: 40 });
  assert.deepEqual(request.stop, ["END", "STOP"]);
  assert.equal(request.stream, true);
  assert.deepEqual(request.metadata, { user_id: "user-7", trace: "abc" });
  assert.equal(request.user, "user-7");
  assert.equal(request.toolEvents, true);
  assert.deepEqual(request.passthrough, {
    cache_control: { type: "ephemeral", ttl: "5m" },
    service_tier: "auto",
  });
  assert.equal(decodeWith({ stop_sequences: [] }).stop, undefined);
});

test("thinking and output_config.effort map to canonical reasoning", () => {
  assert.deepEqual(decodeWith({ thinking: { type: "enabled", budget_tokens: 2048 } }).reasoning, {
    enabled: true,
    budgetTokens: 2048,
  });
  assert.deepEqual(decodeWith({ thinking: { type: "adaptive", display: "omitted" } }).reasoning, {
    enabled: true,
  });
  assert.deepEqual(decodeWith({ thinking: { type: "disabled" } }).reasoning, { enabled: false });
  assert.deepEqual(decodeWith({ output_config: { effort: "xhigh" } }).reasoning, { effort: "xhigh" });
  assert.deepEqual(
    decodeWith({ thinking: { type: "adaptive" }, output_config: { effort: "max" } }).reasoning,
    { enabled: true, effort: "max" },
  );
  assert.equal(decodeWith({}).reasoning, undefined);
});

test("output_config.format becomes a JSON-schema response format", () => {
  const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
  assert.deepEqual(
    decodeWith({ output_config: { format: { type: "json_schema", schema } } }).responseFormat,
    {
      type: "json_schema",
      name: "output",
      schema,
    },
  );
});

test("tools and every tool_choice form; disable_parallel_tool_use turns parallel calls off", () => {
  const tools = [
    {
      name: "get_weather",
      description: "Weather by city",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
      cache_control: { type: "ephemeral", ttl: "1h" },
    },
    { type: "custom", name: "noop", input_schema: { type: "object" }, strict: true },
  ];
  const request = decodeWith({ tools, tool_choice: { type: "auto" } });
  assert.deepEqual(request.tools, [
    {
      name: "get_weather",
      description: "Weather by city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
      cacheControl: { type: "ephemeral", ttl: "1h" },
      param: "tools[0]",
    },
    { name: "noop", parameters: { type: "object" }, strict: true, param: "tools[1]" },
  ]);
  assert.deepEqual(request.toolChoice, { type: "auto" });
  assert.equal(request.parallelToolCalls, undefined);
  assert.deepEqual(decodeWith({ tools, tool_choice: { type: "any" } }).toolChoice, { type: "required" });
  assert.deepEqual(decodeWith({ tools, tool_choice: { type: "none" } }).toolChoice, { type: "none" });
  const forced = decodeWith({
    tools,
    tool_choice: { type: "tool", name: "noop", disable_parallel_tool_use: true },
  });
  assert.deepEqual(forced.toolChoice, { type: "tool", name: "noop" });
  assert.equal(forced.parallelToolCalls, false);
  assert.equal(
    decodeWith({ tools, tool_choice: { type: "any", disable_parallel_tool_use: false } }).parallelToolCalls,
    undefined,
  );
});

test("Anthropic web_search / web_fetch tools and plugins activate the gateway's server tools", () => {
  const request = decodeWith({
    tools: [
      {
        type: "web_search_20250305",
        name: "web_search",
        max_uses: 3,
        allowed_domains: ["example.com"],
        blocked_domains: null,
        user_location: null,
      },
      { type: "web_fetch_20250910", name: "web_fetch", max_uses: null },
      { name: "f", input_schema: { type: "object" } },
    ],
    plugins: [
      { id: "web_search", events: true },
      { id: "datetime", max_uses: 2, timezone: "UTC" },
    ],
  });
  assert.deepEqual(request.tools, [{ name: "f", parameters: { type: "object" }, param: "tools[2]" }]);
  assert.deepEqual(request.serverTools, [
    {
      id: "web_search",
      maxUses: 3,
      events: true,
      parameters: { allowed_domains: ["example.com"] },
      param: "tools[0]",
    },
    { id: "web_fetch", maxUses: 1000, events: false, param: "tools[1]", optional: true },
    { id: "datetime", maxUses: 2, events: false, parameters: { timezone: "UTC" }, param: "plugins[1]" },
  ]);
});

test("system prompt: top-level first, then system turns hoisted in order; blank text dropped, cache_control kept", () => {
  const request = decodeWith({
    system: [
      { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "  " },
    ],
    messages: [
      { role: "system", content: "Use metric units." },
      { role: "user", content: "Hi" },
      { role: "system", content: [{ type: "text", text: "Answer in French." }] },
      { role: "assistant", content: "Bonjour" },
    ],
  });
  assert.deepEqual(request.system, [
    { type: "text", text: "Be brief.", cacheControl: { type: "ephemeral" } },
    { type: "text", text: "Use metric units." },
    { type: "text", text: "Answer in French." },
  ]);
  assert.deepEqual(
    request.messages.map((message) => message.role),
    ["user", "assistant"],
  );
  assert.deepEqual(decodeWith({ system: "Plain." }).system, [{ type: "text", text: "Plain." }]);
});

test("user blocks: text, base64 and URL images, PDF and text documents", () => {
  const request = decodeWith({
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Look", cache_control: { type: "ephemeral" } },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
          {
            type: "document",
            title: "Report",
            source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
            cache_control: { type: "ephemeral" },
          },
          { type: "document", source: { type: "url", url: "https://example.com/b.pdf" } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "Hello doc" } },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[0], {
    role: "user",
    content: [
      { type: "text", text: "Look", cacheControl: { type: "ephemeral" } },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { kind: "url", url: "https://example.com/a.jpg" } },
      {
        type: "file",
        source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
        title: "Report",
        cacheControl: { type: "ephemeral" },
        param: "messages[0].content[3]",
      },
      {
        type: "file",
        source: { kind: "url", url: "https://example.com/b.pdf" },
        param: "messages[0].content[4]",
      },
      {
        type: "file",
        source: {
          kind: "base64",
          mediaType: "text/plain",
          data: Buffer.from("Hello doc").toString("base64"),
        },
        param: "messages[0].content[5]",
      },
    ],
  });
});

test("tool results are split out of the user turn into one tool message in place; the other blocks follow", () => {
  const request = decodeWith({
    messages: [
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_b", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "Sunny", is_error: false },
          {
            type: "tool_result",
            tool_use_id: "toolu_b",
            is_error: true,
            content: [
              { type: "text", text: "Service down" },
              { type: "text", text: " " },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
            ],
          },
          { type: "text", text: "Summarise please." },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_c" }] },
    ],
  });
  assert.deepEqual(request.messages.slice(2), [
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "toolu_a", content: [{ type: "text", text: "Sunny" }] },
        {
          type: "tool-result",
          toolCallId: "toolu_b",
          isError: true,
          content: [
            { type: "text", text: "Service down" },
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBO" } },
          ],
        },
      ],
    },
    { role: "user", content: [{ type: "text", text: "Summarise please." }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "toolu_c", content: [] }] },
  ]);
});

test("assistant blocks: tool_use input becomes exact JSON text; blank text and server-tool transcript blocks are dropped", () => {
  const request = decodeWith({
    messages: [
      { role: "user", content: "Go" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "" },
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
          { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
          { type: "text", text: "Found it.", citations: null },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "save",
            input: { path: "a.txt", lines: [1, 2], ok: true },
          },
        ],
      },
      { role: "assistant", content: " \n " },
      { role: "user", content: "  " },
    ],
  });
  assert.deepEqual(request.messages, [
    { role: "user", content: [{ type: "text", text: "Go" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Found it." },
        {
          type: "tool-call",
          id: "toolu_1",
          name: "save",
          arguments: '{"path":"a.txt","lines":[1,2],"ok":true}',
        },
      ],
    },
  ]);
});

/** An assistant turn as the gateway renders a run with a search, a fetch and a cited answer. */
const serverToolTurn = [
  { type: "server_tool_use", id: "srvtoolu_s1", name: "web_search", input: { query: "paris" } },
  {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_s1",
    content: [
      {
        type: "web_search_result",
        url: "https://a.test/",
        title: "A",
        encrypted_content: "eyJ1Ijoi",
        page_age: null,
      },
    ],
  },
  { type: "server_tool_use", id: "srvtoolu_f1", name: "web_fetch", input: { url: "https://a.test/" } },
  {
    type: "web_fetch_tool_result",
    tool_use_id: "srvtoolu_f1",
    content: {
      type: "web_fetch_result",
      url: "https://a.test/",
      retrieved_at: "2026-03-01T10:00:00.000Z",
      content: {
        type: "document",
        title: "A",
        source: { type: "text", media_type: "text/plain", data: "Long page." },
      },
    },
  },
  {
    type: "web_fetch_tool_result",
    tool_use_id: "srvtoolu_f2",
    content: { type: "web_fetch_tool_result_error", error_code: "url_not_accessible" },
  },
  {
    type: "text",
    text: "Paris is big.",
    citations: [
      {
        type: "web_search_result_location",
        url: "https://a.test/",
        title: "A",
        cited_text: "Paris…",
        encrypted_index: "eyJ1",
      },
    ],
  },
];

test("a replayed server-tool turn: its blocks and the text's citations are dropped, the text stays; count_tokens takes it too", () => {
  const body = {
    ...minimal,
    messages: [
      { role: "user", content: "How big is Paris?" },
      { role: "assistant", content: serverToolTurn },
      { role: "user", content: "And Lyon?" },
    ],
  };
  const request = decodeMessagesRequest(body);
  assert.deepEqual(request.messages[1], {
    role: "assistant",
    content: [{ type: "text", text: "Paris is big." }],
  });
  const textOnly = {
    ...body,
    messages: [body.messages[0], { role: "assistant", content: "Paris is big." }, body.messages[2]],
  };
  assert.equal(
    countMessagesTokens(body).input_tokens,
    countMessagesTokens(textOnly).input_tokens,
    "the dropped blocks are not counted: they never reach the upstream",
  );
});

test("a replayed server_tool_use of a tool the gateway never runs is refused naming its name", () => {
  const body = {
    ...minimal,
    messages: [
      { role: "user", content: "Run it" },
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_1", name: "code_execution", input: { code: "1+1" } },
        ],
      },
    ],
  };
  assertRejected(body, "messages[1].content[0].name", /must be one of web_search, web_fetch/);
  assert.throws(
    () => countMessagesTokens(body),
    (error: unknown) => error instanceof GatewayError && error.param === "messages[1].content[0].name",
  );
});

test("thinking blocks: native and gateway signatures become provider state; empty text with a signature survives", () => {
  const gatewayState: OpaqueReasoningState = {
    providerKind: "google",
    upstreamModel: "gemini-3-pro",
    signature: "g",
  };
  const redactedState: OpaqueReasoningState = {
    providerKind: "anthropic",
    upstreamModel: "claude-sonnet-4-5",
    redactedData: "RD",
  };
  const request = decodeWith({
    messages: [
      { role: "user", content: "Hi" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Native.", signature: "EqEECkYICxgC" },
          { type: "thinking", thinking: "", signature: wrapOpaqueState(gatewayState) },
          { type: "thinking", thinking: "Unsigned." },
          { type: "thinking", thinking: "Empty signature.", signature: "" },
          { type: "thinking", thinking: "" },
          { type: "redacted_thinking", data: "NATIVE_REDACTED" },
          { type: "redacted_thinking", data: wrapOpaqueState(redactedState) },
          { type: "text", text: "Hello" },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[1].content, [
    {
      type: "reasoning",
      text: "Native.",
      providerState: { providerKind: "anthropic", upstreamModel: "", signature: "EqEECkYICxgC" },
    },
    { type: "reasoning", text: "", providerState: gatewayState },
    { type: "reasoning", text: "Unsigned." },
    { type: "reasoning", text: "Empty signature." },
    {
      type: "reasoning",
      text: "",
      providerState: { providerKind: "anthropic", upstreamModel: "", redactedData: "NATIVE_REDACTED" },
    },
    { type: "reasoning", text: "", providerState: redactedState },
    { type: "text", text: "Hello" },
  ]);
});

test("a carrier thinking block whose tool call is not in the turn is dropped", () => {
  const orphan = wrapOpaqueState({
    providerKind: "google",
    upstreamModel: "gemini-3-pro",
    signature: "s",
    toolCallId: "gone",
  });
  const request = decodeWith({
    messages: [
      { role: "user", content: "Hi" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "", signature: orphan },
          { type: "text", text: "Hello" },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[1].content, [{ type: "text", text: "Hello" }]);
});

test("anthropic-beta: comma-separated and repeated headers become distinct names; anthropic-version is accepted", () => {
  const headers = new Headers({ "anthropic-version": "2099-01-01" });
  headers.append("anthropic-beta", "prompt-caching-2024-07-31, interleaved-thinking-2025-05-14");
  headers.append("anthropic-beta", " context-1m-2025-08-07 ,,prompt-caching-2024-07-31");
  assert.deepEqual(decodeWith({}, headers).anthropicBeta, [
    "prompt-caching-2024-07-31",
    "interleaved-thinking-2025-05-14",
    "context-1m-2025-08-07",
  ]);
  assert.equal(decodeWith({}, new Headers()).anthropicBeta, undefined);
  assert.equal(decodeWith({}).anthropicBeta, undefined);
});

test("required fields and ranges are rejected with the parameter named", () => {
  const { max_tokens: _omitted, ...withoutMaxTokens } = minimal;
  assertRejected(withoutMaxTokens, "max_tokens", /max_tokens is required/);
  assertRejected({ ...minimal, max_tokens: 0 }, "max_tokens", /greater than 0/);
  assertRejected({ ...minimal, max_tokens: 1.5 }, "max_tokens");
  assertRejected({ ...minimal, model: "" }, "model");
  assertRejected({ ...minimal, messages: [] }, "messages", /at least 1 item/);
  assertRejected({ ...minimal, temperature: 1.5 }, "temperature", /at most 1/);
  assertRejected({ ...minimal, top_p: -0.1 }, "top_p");
  assertRejected({ ...minimal, top_k: 2.5 }, "top_k");
  assertRejected({ ...minimal, stop_sequences: "END" }, "stop_sequences");
  assertRejected([minimal], null, /JSON object/);
});

test("messages and blocks of the wrong shape are rejected with their path", () => {
  assertRejected(
    { ...minimal, messages: [{ role: "tool", content: "x" }] },
    "messages[0].role",
    /user, assistant, system/,
  );
  assertRejected({ ...minimal, messages: [{ role: "user" }] }, "messages[0].content", /is required/);
  assertRejected(
    {
      ...minimal,
      messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }],
    },
    "messages[0].content[0]",
    /text, image, document, tool_result/,
  );
  assertRejected(
    { ...minimal, messages: [{ role: "user", content: [{ type: "text" }] }] },
    "messages[0].content[0].text",
    /is required/,
  );
  assertRejected(
    { ...minimal, messages: [{ role: "user", content: [{ type: 7 }] }] },
    "messages[0].content[0]",
    /block type this format does not define/,
  );
  assertRejected(
    {
      ...minimal,
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "{}" }] }],
    },
    "messages[0].content[0].input",
    /object/,
  );
  assertRejected(
    {
      ...minimal,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f_1" } }] }],
    },
    "messages[0].content[0].source.file_id",
    /not supported/,
  );
  assertRejected(
    {
      ...minimal,
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "url", url: "file:///etc/passwd" } }] },
      ],
    },
    "messages[0].content[0].source.url",
    /http\(s\)/,
  );
  assertRejected(
    { ...minimal, messages: [{ role: "system", content: "Only a system prompt." }] },
    "messages",
    /at least one user or assistant message/,
  );
});

test("rejected features and inconsistent options name their field", () => {
  assertRejected(
    { ...minimal, response_format: { type: "json_object" } },
    "response_format",
    /use a tool definition/,
  );
  assertRejected(
    { ...minimal, thinking: { type: "adaptive", budget_tokens: 2048 } },
    "thinking.budget_tokens",
  );
  assertRejected(
    { ...minimal, thinking: { type: "sometimes" } },
    "thinking.type",
    /enabled, disabled, adaptive/,
  );
  assertRejected({ ...minimal, output_config: { effort: "extreme" } }, "output_config.effort");
  assertRejected({ ...minimal, tool_choice: { type: "tool" } }, "tool_choice.name", /is required/);
  assertRejected(
    {
      ...minimal,
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: { type: "tool", name: "g" },
    },
    "tool_choice.name",
    /not in tools/,
  );
  assertRejected({ ...minimal, tools: [{ name: "f" }] }, "tools[0].input_schema", /is required/);
  assertRejected({ ...minimal, plugins: [{ id: "telepathy" }] }, "plugins[0].id");
});

test("cache_control on tool_use and tool_result blocks is kept (Claude Code's cache breakpoints)", () => {
  const request = decodeMessagesRequest({
    model: "a/b",
    max_tokens: 10,
    messages: [
      { role: "user", content: "read it" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_1", name: "read", input: {}, cache_control: { type: "ephemeral" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "file body",
            cache_control: { type: "ephemeral", ttl: "1h" },
          },
        ],
      },
    ],
  });
  const call = request.messages[1].content[0];
  assert.equal(call.type, "tool-call");
  assert.deepEqual(call.type === "tool-call" && call.cacheControl, { type: "ephemeral" });
  const result = request.messages[2].content[0];
  assert.deepEqual(result.type === "tool-result" && result.cacheControl, { type: "ephemeral", ttl: "1h" });
});

test("what Claude Code adds is accepted and kept for Anthropic routes: thinking.display, defer_loading, tool_reference, other tool types", () => {
  const request = decodeWith({
    thinking: { type: "adaptive", display: "updates" },
    tools: [
      { name: "Read", input_schema: { type: "object" }, defer_loading: true },
      { type: "bash_20250124", name: "bash" },
      { name: "ToolSearch", input_schema: { type: "object" } },
    ],
    messages: [
      { role: "user", content: "find the tool" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [
              { type: "text", text: "Found:" },
              { type: "tool_reference", tool_name: "Read" },
            ],
          },
        ],
      },
    ],
  });
  assert.deepEqual(request.extraFields, [
    {
      family: "anthropic_messages",
      param: "thinking.display",
      path: ["thinking", "display"],
      value: "updates",
    },
  ]);
  assert.deepEqual(request.tools[0].extraFields, {
    family: "anthropic_messages",
    param: "tools[0].defer_loading",
    fields: { defer_loading: true },
  });
  assert.equal(request.tools[1].name, "ToolSearch", "the other tool type is no function tool");
  assert.deepEqual(request.extraTools, [
    {
      family: "anthropic_messages",
      param: "tools[1]",
      kind: "bash_20250124",
      tool: { type: "bash_20250124", name: "bash" },
    },
  ]);
  const results = request.messages[2];
  assert.equal(results.role, "tool");
  const [result] = results.content as ToolResultPart[];
  assert.deepEqual(result.content, [{ type: "text", text: "Found:" }]);
  assert.deepEqual(result.extraBlocks, [
    {
      family: "anthropic_messages",
      param: "messages[2].content[0].content[1]",
      kind: "tool_reference",
      index: 1,
      block: { type: "tool_reference", tool_name: "Read" },
    },
  ]);
  assert.equal(request.strict, undefined);
});

test("top-level blocks of types the gateway does not know are kept in place for Anthropic routes, user and assistant turns", () => {
  const searchResult = {
    type: "search_result",
    source: "https://docs.test/a",
    title: "A",
    content: [{ type: "text", text: "Paris is the capital." }],
  };
  const request = decodeWith({
    messages: [
      { role: "user", content: [{ type: "text", text: "Look:" }, searchResult, { type: "text", text: "?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "mystery_block_2027", data: 1 },
          { type: "tool_use", id: "toolu_1", name: "f", input: {} },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }, searchResult],
      },
    ],
  });
  const [question, answer, results, onlyExtra] = request.messages;
  assert.equal(question.role, "user");
  assert.deepEqual(
    question.content.map((part) => part.type === "text" && part.text),
    ["Look:", "?"],
  );
  assert.deepEqual(question.role === "user" && question.extraBlocks, [
    {
      family: "anthropic_messages",
      param: "messages[0].content[1]",
      kind: "search_result",
      index: 1,
      block: searchResult,
    },
  ]);
  assert.deepEqual(answer.role === "assistant" && answer.extraBlocks, [
    {
      family: "anthropic_messages",
      param: "messages[1].content[1]",
      kind: "mystery_block_2027",
      index: 1,
      block: { type: "mystery_block_2027", data: 1 },
    },
  ]);
  assert.equal(results.role, "tool");
  // A turn left with only such a block is kept (Anthropic routes get it; others leave it out).
  assert.deepEqual(onlyExtra, {
    role: "user",
    content: [],
    extraBlocks: [
      {
        family: "anthropic_messages",
        param: "messages[2].content[1]",
        kind: "search_result",
        index: 0,
        block: searchResult,
      },
    ],
  });
});

test("strict mode comes from hi_strict or the X-Hi-Strict header; thread is refused with Anthropic's details", () => {
  assert.equal(decodeWith({ hi_strict: true }).strict, true);
  const headers = new Headers({ "x-hi-strict": "true" });
  assert.equal(decodeWith({ hi_strict: null }, headers).strict, true);
  assert.equal(decodeWith({}, new Headers({ "x-hi-strict": "no" })).strict, undefined);
  assert.throws(
    () => decodeWith({ thread: { type: "create" } }),
    (error: GatewayError) =>
      error.param === "thread" && error.details?.error_code === "thread_unsupported_request",
  );
});
