import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { wrapOpaqueState } from "../opaque-state.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeOutputItems } from "./encode-output-items.js";
import { createItemSeal } from "./item-seal.js";

const minimal = { model: "openai/gpt-5", input: "Hi" };
const FIXTURES = pathToFileURL(`${recordedPath("openai", "responses")}/`);

function decodeWith(extra: Record<string, unknown>) {
  return decodeResponsesRequest({ ...minimal, ...extra });
}

/** Asserts the body is rejected as invalid_request naming `param`; returns the message. */
function assertRejected(body: unknown, param: string | null, messagePattern?: RegExp): string {
  let caught: unknown;
  try {
    decodeResponsesRequest(body);
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

test("a string input is one user message; defaults are empty", () => {
  assert.deepEqual(decodeResponsesRequest(minimal), {
    model: "openai/gpt-5",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    tools: [],
    sampling: {},
    serverTools: [],
    toolEvents: false,
    stream: false,
    passthrough: {},
    passthroughFormat: "responses",
  });
});

test("instructions, then system and developer messages, form the system prompt in order", () => {
  const request = decodeWith({
    instructions: "Be brief.",
    input: [
      { role: "developer", content: "Use metric units." },
      { type: "message", role: "user", content: "Weather?" },
      { role: "system", content: [{ type: "input_text", text: "No emojis." }] },
      { role: "system", content: "" },
    ],
  });
  assert.deepEqual(request.system, [
    { type: "text", text: "Be brief." },
    { type: "text", text: "Use metric units." },
    { type: "text", text: "No emojis." },
  ]);
  assert.deepEqual(request.messages, [{ role: "user", content: [{ type: "text", text: "Weather?" }] }]);
});

test("user content parts: input_text, image URL and data URL with detail, file data and file URL", () => {
  const request = decodeWith({
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "Look" },
          { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "original" },
          { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
          { type: "input_file", file_url: "https://example.com/b.pdf" },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[0], {
    role: "user",
    content: [
      { type: "text", text: "Look" },
      { type: "image", source: { kind: "url", url: "https://example.com/a.png" }, detail: "low" },
      {
        type: "image",
        source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" },
        detail: "high",
      },
      {
        type: "file",
        source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
        filename: "a.pdf",
        param: "input[0].content[3]",
      },
      {
        type: "file",
        source: { kind: "url", url: "https://example.com/b.pdf" },
        param: "input[0].content[4]",
      },
    ],
  });
});

test("multi-turn: reasoning, assistant text and function calls form one assistant message; outputs one tool message", () => {
  const args = '{ "city" : "Paris",\n"unit":"c" }';
  const request = decodeWith({
    input: [
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        type: "reasoning",
        id: "rs_abc",
        summary: [
          { type: "summary_text", text: "Two cities." },
          { type: "summary_text", text: "Call twice." },
        ],
        encrypted_content: "gAAAAB-native-blob",
      },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Checking.", annotations: [] }],
      },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: args },
      {
        type: "function_call",
        id: "fc_2",
        call_id: "call_2",
        name: "get_weather",
        arguments: '{"city":"Rome"}',
      },
      { type: "function_call_output", call_id: "call_1", output: "18C" },
      { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "21C" }] },
      { role: "assistant", content: "Paris 18C, Rome 21C." },
      { role: "user", content: "Thanks" },
    ],
  });
  assert.deepEqual(request.messages, [
    { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "Two cities.\n\nCall twice.",
          providerState: {
            providerKind: "openai-responses",
            upstreamModel: "",
            encryptedContent: "gAAAAB-native-blob",
            itemId: "rs_abc",
          },
        },
        { type: "text", text: "Checking." },
        { type: "tool-call", id: "call_1", name: "get_weather", arguments: args },
        { type: "tool-call", id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call_1", content: [{ type: "text", text: "18C" }] },
        { type: "tool-result", toolCallId: "call_2", content: [{ type: "text", text: "21C" }] },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "Paris 18C, Rome 21C." }] },
    { role: "user", content: [{ type: "text", text: "Thanks" }] },
  ]);
});

test("encrypted_content the gateway produced unwraps to the exact provider state, without the item id", () => {
  const state = { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", signature: "sig==" };
  const request = decodeWith({
    input: [
      { role: "user", content: "Hi" },
      { type: "reasoning", id: "rs_req_0", summary: [], encrypted_content: wrapOpaqueState(state) },
      { type: "function_call", call_id: "toolu_1", name: "f", arguments: "{}" },
    ],
  });
  assert.deepEqual(request.messages[1].content[0], { type: "reasoning", text: "", providerState: state });
});

test("blank assistant text, empty reasoning and empty tool output produce no parts", () => {
  const request = decodeWith({
    input: [
      { role: "user", content: "Hi" },
      { type: "reasoning", summary: [] },
      { role: "assistant", content: [{ type: "output_text", text: " \n" }] },
      { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "" },
    ],
  });
  assert.deepEqual(request.messages.slice(1), [
    { role: "assistant", content: [{ type: "tool-call", id: "c", name: "f", arguments: "{}" }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c", content: [] }] },
  ]);
});

test("a reasoning item with only raw reasoning_text content keeps that text", () => {
  const request = decodeWith({
    input: [{ type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "raw" }] }],
  });
  assert.deepEqual(request.messages, [{ role: "assistant", content: [{ type: "reasoning", text: "raw" }] }]);
});

test("assistant messages accept input_text and refusal parts as text", () => {
  const request = decodeWith({
    input: [
      {
        role: "assistant",
        content: [
          { type: "input_text", text: "a" },
          { type: "refusal", refusal: "I can't." },
        ],
      },
    ],
  });
  assert.deepEqual(request.messages[0].content, [
    { type: "text", text: "a" },
    { type: "text", text: "I can't." },
  ]);
});

test("function tools (flat shape), tool_choice and parallel_tool_calls", () => {
  const parameters = { type: "object", properties: { city: { type: "string" } } };
  const request = decodeWith({
    tools: [
      { type: "function", name: "get_weather", description: "Weather", parameters, strict: true },
      { type: "function", name: "noop", description: null, parameters: null, strict: null },
    ],
    tool_choice: { type: "function", name: "get_weather" },
    parallel_tool_calls: false,
  });
  assert.deepEqual(request.tools, [
    { name: "get_weather", description: "Weather", parameters, strict: true, param: "tools[0]" },
    { name: "noop", param: "tools[1]" },
  ]);
  assert.deepEqual(request.toolChoice, { type: "tool", name: "get_weather" });
  assert.equal(request.parallelToolCalls, false);
  for (const choice of ["auto", "none", "required"] as const) {
    assert.deepEqual(decodeWith({ tool_choice: choice }).toolChoice, { type: choice });
  }
});

test("server tools in the built-in, vendor, hosted and alternate forms merge into activations", () => {
  const request = decodeWith({
    tools: [
      { type: "web_search", max_uses: 5 },
      {
        type: "web_search_preview",
        search_context_size: "high",
        user_location: { type: "approximate", city: "Paris" },
      },
      { type: "hi:web_fetch", events: true },
      { type: "pdf", parameters: { engine: "text" }, max_uses: 3, events: false },
      { type: "image_generation" },
      { type: "datetime", max_uses: 9 },
      { type: "datetime", max_uses: 2 },
      { type: "function", name: "f" },
    ],
  });
  assert.deepEqual(request.serverTools, [
    {
      id: "web_search",
      maxUses: 5,
      events: false,
      parameters: { search_context_size: "high", user_location: { type: "approximate", city: "Paris" } },
      param: "tools[0]",
      optional: true,
    },
    { id: "web_fetch", maxUses: 1000, events: true, param: "tools[2]", optional: true },
    {
      id: "pdf",
      maxUses: 3,
      events: false,
      parameters: { engine: "text" },
      param: "tools[3]",
      optional: true,
    },
    { id: "image", maxUses: 1000, events: false, param: "tools[4]", optional: true },
    { id: "datetime", maxUses: 2, events: false, param: "tools[5]", optional: true },
  ]);
  assert.deepEqual(
    request.tools.map((tool) => tool.name),
    ["f"],
  );
});

test("sampling, output cap, text format, verbosity, reasoning effort, user and tool events", () => {
  const schema = { type: "object", properties: { a: { type: "string" } } };
  const request = decodeWith({
    temperature: 0.2,
    top_p: 0.9,
    top_logprobs: 3,
    frequency_penalty: -1.5,
    presence_penalty: 2,
    logit_bias: { "50256": -100 },
    seed: 7,
    max_output_tokens: 512,
    text: { format: { type: "json_schema", name: "answer", schema, strict: true }, verbosity: "low" },
    reasoning: { effort: "high", summary: "detailed" },
    user: "user-1",
    hi_tool_events: true,
    stream: true,
  });
  assert.deepEqual(request.sampling, {
    temperature: 0.2,
    topP: 0.9,
    logprobs: true,
    topLogprobs: 3,
    frequencyPenalty: -1.5,
    presencePenalty: 2,
    logitBias: { "50256": -100 },
    seed: 7,
  });
  assert.equal(request.maxOutputTokens, 512);
  assert.deepEqual(request.responseFormat, { type: "json_schema", name: "answer", schema, strict: true });
  assert.equal(request.verbosity, "low");
  assert.deepEqual(request.reasoning, { effort: "high" });
  assert.equal(request.user, "user-1");
  assert.equal(request.toolEvents, true);
  assert.equal(request.stream, true);
  assert.deepEqual(decodeWith({ text: { format: { type: "json_object" } } }).responseFormat, {
    type: "json_object",
  });
  assert.equal(decodeWith({ user: "u", safety_identifier: "s" }).user, "s");
  assert.equal(decodeWith({ reasoning: { summary: "auto" } }).reasoning, undefined);
});

test("unknown top-level fields, include and max_tool_calls pass through; service_tier is accepted and dropped", () => {
  const request = decodeWith({
    include: ["reasoning.encrypted_content"],
    max_tool_calls: 4,
    service_tier: "flex",
    store: false,
    background: false,
    previous_response_id: null,
    conversation: null,
    prompt: null,
    stop: null,
    metadata: { team: "a" },
    provider: { order: ["x"] },
  });
  assert.deepEqual(request.passthrough, {
    include: ["reasoning.encrypted_content"],
    max_tool_calls: 4,
    metadata: { team: "a" },
    provider: { order: ["x"] },
  });
  assert.equal(request.maxToolCalls, 4);
});

test("reasoning.summary and service_tier are accepted whatever their value and ignored", () => {
  for (const summary of ["auto", "concise", "detailed", "none", "brief", 42, { mode: "x" }, null]) {
    const request = decodeWith({ reasoning: { effort: "low", summary } });
    assert.deepEqual(request.reasoning, { effort: "low" }, `summary ${JSON.stringify(summary)}`);
    assert.equal("reasoning" in request.passthrough, false);
  }
  for (const tier of ["flex", "priority", "scale", 7, { tier: "x" }, null]) {
    const request = decodeWith({ service_tier: tier });
    assert.equal("service_tier" in request.passthrough, false, `service_tier ${JSON.stringify(tier)}`);
  }
});

test("stateful fields and stop are rejected with their param, in stream and non-stream requests", () => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ previous_response_id: "resp_1" }, "previous_response_id", /keeps no state/],
    [{ store: true }, "store", /store: true is not supported/],
    [{ background: true }, "background", /background/],
    [{ conversation: "conv_1" }, "conversation", /conversation/],
    [{ conversation: { id: "conv_1" } }, "conversation", /conversation/],
    [{ prompt: { id: "pmpt_1" } }, "prompt", /prompt/],
    [{ stop: ["\n"] }, "stop", /stop sequences are not expressible in the responses format/],
    [{ stop: "END" }, "stop", /stop sequences/],
  ];
  for (const [extra, param, pattern] of cases) {
    for (const stream of [false, true]) assertRejected({ ...minimal, ...extra, stream }, param, pattern);
  }
});

test("field validation names the field OpenAI-style", () => {
  const cases: Array<[Record<string, unknown>, string | null, RegExp?]> = [
    [{ model: undefined }, "model", /model is required/],
    [{ input: undefined }, "input", /input is required/],
    [{ input: 5 }, "input", /must be a string or an array of input items/],
    [{ input: [] }, "input", /at least 1 item/],
    [{ temperature: 2.5 }, "temperature", /at most 2/],
    [{ temperature: -0.1 }, "temperature", /at least 0/],
    [{ top_p: 1.5 }, "top_p", /at most 1/],
    [{ max_output_tokens: 0 }, "max_output_tokens"],
    [{ max_output_tokens: 1.5 }, "max_output_tokens", /integer/],
    [{ top_logprobs: 21 }, "top_logprobs"],
    [{ frequency_penalty: 3 }, "frequency_penalty", /at most 2/],
    [{ presence_penalty: -3 }, "presence_penalty", /at least -2/],
    [{ logit_bias: { "1": 101 } }, "logit_bias.1", /at most 100/],
    [{ seed: 1.5 }, "seed", /integer/],
    [{ parallel_tool_calls: "yes" }, "parallel_tool_calls", /boolean/],
    [{ max_tool_calls: -1 }, "max_tool_calls"],
    [{ include: "x" }, "include", /array/],
    [{ text: { format: { type: "xml" } } }, "text.format.type"],
    [{ text: { format: { type: "json_schema", schema: {} } } }, "text.format.name", /required/],
    [{ text: { verbosity: "loud" } }, "text.verbosity"],
    [{ reasoning: { effort: "extreme" } }, "reasoning.effort"],
    [{ tool_choice: "any" }, "tool_choice", /auto, none, required/],
    [{ tool_choice: { type: "function", name: "missing" } }, "tool_choice", /not in tools/],
    [
      { tools: [{ type: "functoin", name: "f" }], tool_choice: { type: "function", name: "f" } },
      "tools[0].type",
      /tools\[0\] has type "functoin", which is not a function tool's/,
    ],
    [{ tools: [{ type: "function" }] }, "tools[0].name", /required/],
    [{ tools: [{ name: "untyped" }] }, "tools[0]", /server tool with type one of/],
    [{ tools: [{ type: "web_search", max_uses: 0 }] }, "tools[0].max_uses"],
    [{ user: 5 }, "user"],
    [{ hi_tool_events: "on" }, "hi_tool_events"],
  ];
  for (const [extra, param, pattern] of cases) assertRejected({ ...minimal, ...extra }, param, pattern);
  assertRejected([], null, /request body must be a JSON object/);
});

test("input items of types the gateway does not know are kept in their places for Responses routes", () => {
  const call = { type: "custom_tool_call", call_id: "call_1", name: "apply_patch", input: "*** Begin Patch" };
  const output = { type: "custom_tool_call_output", call_id: "call_1", output: "Done" };
  const request = decodeWith({
    input: [
      { role: "user", content: "Patch it" },
      { type: "reasoning", summary: [{ type: "summary_text", text: "Thinking" }] },
      call,
      { type: "function_call", call_id: "call_2", name: "shell", arguments: "{}" },
      output,
      { type: "compaction_2027", encrypted_content: "x" },
    ],
  });
  const [, turn, outputTurn, later] = request.messages;
  assert.deepEqual(turn, {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Thinking" },
      { type: "tool-call", id: "call_2", name: "shell", arguments: "{}" },
    ],
    extraBlocks: [
      { family: "responses", param: "input[2]", kind: "custom_tool_call", index: 1, block: call },
    ],
  });
  assert.deepEqual(outputTurn, {
    role: "user",
    content: [],
    extraBlocks: [
      { family: "responses", param: "input[4]", kind: "custom_tool_call_output", index: 0, block: output },
    ],
  });
  assert.equal(later.role, "assistant");
  assert.equal(later.role === "assistant" && later.extraBlocks?.[0].kind, "compaction_2027");
});

test("input item validation names the item and part", () => {
  const cases: Array<[unknown[], string, RegExp?]> = [
    [[{ role: "tool", content: "x" }], "input[0].role"],
    [[{ type: 5 }], "input[0]", /must be a message, function_call.*web_search_call/],
    [[{ type: "function_call", name: "f" }], "input[0].call_id", /is required/],
    [[{ role: "user", content: 5 }], "input[0].content"],
    [
      [
        { role: "user", content: "a" },
        { role: "user", content: "b" },
        { role: "user", content: [{ type: "input_image" }] },
      ],
      "input[2].content[0].image_url",
      /is required/,
    ],
    [
      [{ role: "user", content: [{ type: "input_image", image_url: "ftp://x/y.png" }] }],
      "input[0].content[0].image_url",
    ],
    [
      [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png,notbase64" }] }],
      "input[0].content[0].image_url",
      /base64 data URL/,
    ],
    [
      [{ role: "user", content: [{ type: "input_file", file_data: "JVBERi0=" }] }],
      "input[0].content[0].file_data",
    ],
    [
      [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }],
      "input[0].content[0].file_id",
      /not supported/,
    ],
    [
      [{ role: "user", content: [{ type: "input_file", filename: "a.pdf" }] }],
      "input[0].content[0]",
      /file_data or file_url/,
    ],
    [
      [{ role: "user", content: [{ type: "output_text", text: "x" }] }],
      "input[0].content[0].type",
      /not allowed in user/,
    ],
    [
      [{ role: "system", content: [{ type: "input_image", image_url: "https://x/y.png" }] }],
      "input[0].content[0].type",
    ],
    [
      [{ role: "assistant", content: [{ type: "input_file", file_url: "https://x/y.pdf" }] }],
      "input[0].content[0].type",
    ],
    [[{ type: "function_call", call_id: "c", name: "f" }], "input[0].arguments", /is required/],
    [[{ type: "function_call_output", output: "x" }], "input[0].call_id", /is required/],
    [[{ type: "function_call_output", call_id: "c", output: 3 }], "input[0].output"],
    [[{ type: "reasoning", summary: [{ type: "summary_text" }] }], "input[0].summary[0].text"],
    [[{ type: "item_reference", id: "msg_1" }], "input[0].id", /item_reference.*no state/],
  ];
  for (const [input, param, pattern] of cases) assertRejected({ ...minimal, input }, param, pattern);
});

test("a recorded stateless replay (reasoning + function_call + function_call_output) decodes in order", () => {
  const path = new URL("reasoning-function-call-roundtrip.2.request.json", FIXTURES);
  const body = JSON.parse(readFileSync(path, "utf8"));
  const request = decodeResponsesRequest({ ...body, model: "openai/gpt-5" });
  assert.equal(request.system[0].text, body.instructions);
  assert.deepEqual(
    request.messages.map((message) => [message.role, message.content.map((part) => part.type)]),
    [
      ["user", ["text"]],
      ["assistant", ["reasoning", "tool-call"]],
      ["tool", ["tool-result"]],
    ],
  );
  const [reasoning, call] = request.messages[1].content;
  assert.ok(reasoning.type === "reasoning" && call.type === "tool-call");
  const item = body.input[1];
  assert.equal(reasoning.providerState?.encryptedContent, item.encrypted_content);
  assert.equal(reasoning.providerState?.itemId, item.id);
  assert.equal(reasoning.text.split("\n\n**").length, item.summary.length);
  assert.equal(call.arguments, body.input[2].arguments);
  assert.deepEqual(request.passthrough.include, ["reasoning.encrypted_content"]);
  assert.deepEqual(request.reasoning, { effort: "low" });
});

test("a recorded function_call replay with an fc_ call_id decodes", () => {
  const path = new URL("stream-function-call-then-text.2.request.json", FIXTURES);
  const body = JSON.parse(readFileSync(path, "utf8"));
  const request = decodeResponsesRequest({ ...body, model: "openai/gpt-4o" });
  const roles = request.messages.map((message) => message.role);
  assert.deepEqual(roles.slice(-2), ["assistant", "tool"]);
  assert.equal(request.stream, true);
});

test("replayed web_search_call items are dropped, whole or by a reference the gateway issued; others are refused", () => {
  const seal = createItemSeal(Buffer.alloc(32, 3));
  const [search] = encodeOutputItems(
    [
      {
        type: "server-tool-call",
        call: { id: "call_1", tool: "web_search", input: { query: "q" }, events: false },
      },
    ],
    "req_1",
    seal,
  );
  const answer = {
    type: "message",
    role: "assistant",
    content: [
      {
        type: "output_text",
        text: "Paris (example.com).",
        annotations: [
          { type: "url_citation", url: "https://example.com", title: "E", start_index: 6, end_index: 19 },
        ],
        logprobs: [],
      },
    ],
  };
  const turn = (replayed: unknown) =>
    decodeResponsesRequest(
      {
        ...minimal,
        input: [{ role: "user", content: "Capital?" }, replayed, answer, { role: "user", content: "Sure?" }],
      },
      { itemSeal: seal },
    ).messages;
  const expected = [
    { role: "user", content: [{ type: "text", text: "Capital?" }] },
    { role: "assistant", content: [{ type: "text", text: "Paris (example.com)." }] },
    { role: "user", content: [{ type: "text", text: "Sure?" }] },
  ];
  assert.deepEqual(turn(search), expected);
  assert.deepEqual(turn({ type: "item_reference", id: search.id }), expected);
  assert.deepEqual(turn({ type: "web_search_call", id: "ws_other", status: "completed" }), expected);
  for (const id of ["ws_68f0c2a1b9e48190a4", "ws_call_1", `${search.id.slice(0, -2)}xx`]) {
    let caught: unknown;
    try {
      turn({ type: "item_reference", id });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof GatewayError && caught.param === "input[1].id", id);
  }
});

test("a recorded OpenAI web search response replayed as input decodes: its calls dropped, its annotations accepted", () => {
  const path = new URL("openai-web-search-tool.1.json", FIXTURES);
  const recorded = JSON.parse(readFileSync(path, "utf8"));
  const request = decodeResponsesRequest({
    ...minimal,
    input: [{ role: "user", content: "News?" }, ...recorded.output, { role: "user", content: "More?" }],
  });
  // Its reasoning items carry neither summary nor state, so the answer's text is all that remains.
  const message = recorded.output.at(-1);
  assert.deepEqual(request.messages, [
    { role: "user", content: [{ type: "text", text: "News?" }] },
    { role: "assistant", content: [{ type: "text", text: message.content[0].text }] },
    { role: "user", content: [{ type: "text", text: "More?" }] },
  ]);
  assert.ok(message.content[0].annotations.length > 0, "the recording has annotations");
});

test("what Codex adds is accepted and kept for Responses routes: namespace, custom and other hosted tools, extra function fields", () => {
  const namespace = {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Agents",
    tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object" } }],
  };
  const request = decodeResponsesRequest(
    {
      ...minimal,
      tools: [
        { type: "function", name: "shell", parameters: { type: "object" }, defer_loading: true },
        namespace,
        {
          type: "custom",
          name: "apply_patch",
          format: { type: "grammar", syntax: "lark", definition: "start: x" },
        },
        { type: "file_search", vector_store_ids: ["vs_1"] },
      ],
    },
    { headers: new Headers({ "X-Hi-Strict": "true" }) },
  );
  assert.deepEqual(
    request.tools.map((tool) => [tool.name, tool.extraFields?.param]),
    [["shell", "tools[0].defer_loading"]],
  );
  assert.deepEqual(
    request.extraTools?.map((extra) => [extra.family, extra.param, extra.kind]),
    [
      ["responses", "tools[1]", "namespace"],
      ["responses", "tools[2]", "custom"],
      ["responses", "tools[3]", "file_search"],
    ],
  );
  assert.deepEqual(request.extraTools?.[0].tool, namespace);
  assert.deepEqual(request.serverTools, []);
  assert.equal(request.strict, true);
});
