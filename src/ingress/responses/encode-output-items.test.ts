/** Server tools in non-streamed output: web_search_call and image_generation_call items, their ids, and url_citation annotations. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AFTER_TEXT,
  BEFORE_TEXT,
  GENERATED_BASE64,
  imageCalls,
  imageToolRunResult,
} from "../../../test/helpers/image-tool-run.js";
import { loadOpenApiValidator } from "../../../test/helpers/openapi-schema-validator.js";
import type {
  CanonicalUsage,
  ResultContent,
  ServerToolCall,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { encodeOutputItems } from "./encode-output-items.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createItemSeal } from "./item-seal.js";
import { responsesResponseSchema } from "./response-schema.js";

const FR = "https://example.com/fr";
const WIKI = "https://en.wikipedia.org/wiki/Paris";

const search: ServerToolCall = {
  id: "call_1",
  tool: "web_search",
  input: { query: "capital of france" },
  events: false,
};
const searched: ServerToolResult = {
  callId: "call_1",
  tool: "web_search",
  input: search.input,
  status: "completed",
  output: {
    kind: "search",
    query: "capital of france",
    sources: [
      { url: FR, title: "France", snippet: "Paris is…", pageAge: null },
      { url: WIKI, title: "Paris", snippet: "", pageAge: "2 days ago" },
    ],
  },
  costMicroUsd: 5000,
  durationMs: 200,
  events: false,
};
const read: ServerToolCall = {
  id: "call_2",
  tool: "web_fetch",
  input: { url: "http://example.com/fr" },
  events: false,
};
const readDone: ServerToolResult = {
  callId: "call_2",
  tool: "web_fetch",
  input: read.input,
  status: "completed",
  output: {
    kind: "fetch",
    url: "http://example.com/fr",
    finalUrl: FR,
    title: "France",
    retrievedAt: "2026-11-26T12:00:00Z",
    contentType: "text/html",
    bytes: 1000,
    text: "# France",
    truncated: false,
  },
  costMicroUsd: 1000,
  durationMs: 90,
  events: false,
};

function failed(call: ServerToolCall): ServerToolResult {
  return {
    callId: call.id,
    tool: call.tool,
    input: call.input,
    status: "failed",
    error: { code: "unavailable", message: "The backend did not answer." },
    costMicroUsd: 0,
    durationMs: 5,
    events: false,
  };
}

function citation(text: string, span: string, url = FR): UrlCitation {
  const startIndex = text.indexOf(span);
  return { url, title: "France", startIndex, endIndex: startIndex + span.length, citedText: "Paris is…" };
}

const answer = "Paris ([example.com](https://example.com/fr)).";

/** Reasoning and text, a search, a page read, then the cited answer. */
const toolLoop: ResultContent[] = [
  { type: "reasoning", text: "Search first." },
  { type: "text", text: "Let me check." },
  { type: "server-tool-call", call: search },
  { type: "server-tool-result", result: searched },
  { type: "server-tool-call", call: read },
  { type: "server-tool-result", result: readDone },
  { type: "text", text: answer, citations: [citation(answer, "([example.com](https://example.com/fr))")] },
];

test("each call is one web_search_call item where it happened: a search with its sources, a page read as open_page", () => {
  assert.deepEqual(encodeOutputItems(toolLoop, "req_1"), [
    { id: "rs_req_1_0", type: "reasoning", summary: [{ type: "summary_text", text: "Search first." }] },
    {
      id: "msg_req_1_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Let me check.", annotations: [], logprobs: [] }],
    },
    {
      id: "ws_call_1",
      type: "web_search_call",
      status: "completed",
      action: {
        type: "search",
        query: "capital of france",
        queries: ["capital of france"],
        sources: [
          { type: "url", url: FR },
          { type: "url", url: WIKI },
        ],
      },
    },
    { id: "ws_call_2", type: "web_search_call", status: "completed", action: { type: "open_page", url: FR } },
    {
      id: "msg_req_1_4",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [
        {
          type: "output_text",
          text: answer,
          annotations: [{ type: "url_citation", url: FR, title: "France", start_index: 6, end_index: 45 }],
          logprobs: [],
        },
      ],
    },
  ]);
});

test("calls of one round come first, then their results: each result finishes its own item in place", () => {
  const second: ServerToolCall = { ...search, id: "call_3", input: { query: "paris population" } };
  const items = encodeOutputItems(
    [
      { type: "server-tool-call", call: search },
      { type: "server-tool-call", call: second },
      { type: "server-tool-call", call: read },
      { type: "server-tool-result", result: failed(read) },
      { type: "server-tool-result", result: failed(second) },
      { type: "server-tool-result", result: searched },
      { type: "text", text: "Done." },
    ],
    "req_1",
  );
  assert.deepEqual(
    items.map((item) => [item.id, item.type === "web_search_call" ? item.status : item.type]),
    [
      ["ws_call_1", "completed"],
      ["ws_call_3", "failed"],
      ["ws_call_2", "failed"],
      ["msg_req_1_3", "message"],
    ],
  );
});

test("a failed or unanswered call is a failed item with the action its input asked for", () => {
  const unreadable: ServerToolCall = { id: "call_9", tool: "web_fetch", input: {}, events: false };
  const items = encodeOutputItems(
    [
      { type: "server-tool-call", call: search },
      { type: "server-tool-result", result: failed(search) },
      { type: "server-tool-call", call: read },
      { type: "server-tool-result", result: failed(read) },
      { type: "server-tool-call", call: unreadable },
      { type: "server-tool-call", call: { ...search, id: "call_8" } },
    ],
    "req_1",
  );
  assert.deepEqual(items, [
    {
      id: "ws_call_1",
      type: "web_search_call",
      status: "failed",
      action: { type: "search", query: "capital of france", queries: ["capital of france"], sources: [] },
    },
    {
      id: "ws_call_2",
      type: "web_search_call",
      status: "failed",
      action: { type: "open_page", url: "http://example.com/fr" },
    },
    { id: "ws_call_9", type: "web_search_call", status: "failed", action: { type: "open_page", url: null } },
    {
      id: "ws_call_8",
      type: "web_search_call",
      status: "failed",
      action: { type: "search", query: "capital of france", queries: ["capital of france"], sources: [] },
    },
  ]);
});

test("datetime has no item and leaves text around it one message; citations shift by the text joined before", () => {
  const clock: ServerToolCall = {
    id: "call_t",
    tool: "datetime",
    input: { timezone: "Europe/Paris" },
    events: true,
  };
  const head = "🇫🇷 It is noon. ";
  const tail = "Paris ([example.com](https://example.com/fr)).";
  const items = encodeOutputItems(
    [
      { type: "text", text: head },
      { type: "server-tool-call", call: clock },
      {
        type: "server-tool-result",
        result: {
          callId: "call_t",
          tool: "datetime",
          input: clock.input,
          status: "completed",
          output: { kind: "datetime", utc: "2026-11-26T11:00:00Z", timezones: ["Europe/Paris"] },
          costMicroUsd: 0,
          durationMs: 0,
          events: true,
        },
      },
      { type: "text", text: tail, citations: [citation(tail, "([example.com](https://example.com/fr))")] },
    ],
    "req_1",
  );
  assert.equal(items.length, 1);
  const [message] = items;
  assert.ok(message.type === "message");
  const [part] = message.content;
  assert.equal(part.text, head + tail);
  // The flag is two code points but four UTF-16 units: offsets count units, as string indices do.
  assert.deepEqual(part.annotations, [
    { type: "url_citation", url: FR, title: "France", start_index: 23, end_index: 62 },
  ]);
  assert.equal(part.text.slice(23, 62), "([example.com](https://example.com/fr))");
});

test("with a seal, a web_search_call id proves the gateway issued it and carries nothing but its type", () => {
  const seal = createItemSeal(Buffer.alloc(32, 7));
  const items = encodeOutputItems(toolLoop, "req_1", seal);
  const calls = items.filter((item) => item.type === "web_search_call");
  assert.equal(calls.length, 2);
  for (const [index, item] of calls.entries()) {
    assert.match(item.id, new RegExp(`^ws_call_${index + 1}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}$`));
    assert.deepEqual(seal.open(item.id), { kind: "item", item: { type: "web_search_call" } });
  }
  assert.deepEqual(
    encodeOutputItems(toolLoop, "req_1").map((item) => item.type),
    items.map((item) => item.type),
  );
});

const context: ResponsesEncodeContext = {
  requestId: "req_1",
  model: "openai/gpt-5",
  createdAt: 1_700_000_000,
};
const usage: CanonicalUsage = {
  inputTokens: 10,
  outputTokens: 5,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};

test("a response with server-tool items and annotations validates against OpenAI's Response schema and ours", () => {
  const body = encodeResponsesResult(
    {
      content: [...toolLoop, { type: "server-tool-call", call: { ...search, id: "x" } }],
      finishReason: "stop",
      usage,
    },
    { usage, costMicroUsd: 7000, finishReason: "stop" },
    context,
  );
  assert.equal(responsesResponseSchema.safeParse(body).success, true);
  const validator = loadOpenApiValidator();
  assert.deepEqual(validator.validate("Response", body), []);
  // The check can fail: an item without its action is reported.
  const broken = { ...body, output: [{ id: "ws_x", type: "web_search_call", status: "completed" }] };
  assert.ok(validator.validate("Response", broken).some((violation) => violation.includes("action")));
});

test("an image call is one image_generation_call item where it happened: the image, its size and format; a failed one has no result", () => {
  const items = encodeOutputItems(imageToolRunResult().content, "req_1");
  assert.deepEqual(items, [
    {
      id: "msg_req_1_0",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: BEFORE_TEXT, annotations: [], logprobs: [] }],
    },
    {
      id: "ig_call_img1",
      type: "image_generation_call",
      status: "completed",
      result: GENERATED_BASE64,
      revised_prompt: "A red fox in snow.",
      size: "40x30",
      output_format: "png",
    },
    { id: "ig_call_img2", type: "image_generation_call", status: "failed", result: null },
    {
      id: "msg_req_1_3",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: AFTER_TEXT, annotations: [], logprobs: [] }],
    },
  ]);
});

test("with a seal, an image_generation_call id carries nothing but its type (never the image)", () => {
  const seal = createItemSeal(Buffer.alloc(32, 7));
  const items = encodeOutputItems(imageToolRunResult().content, "req_1", seal);
  const images = items.filter((item) => item.type === "image_generation_call");
  assert.equal(images.length, 2);
  for (const item of images) {
    assert.match(item.id, /^ig_call_img\d\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.ok(item.id.length < 120, "the id does not grow with the image");
    assert.deepEqual(seal.open(item.id), { kind: "item", item: { type: "image_generation_call" } });
  }
});

test("a response with image_generation_call items validates against OpenAI's Response schema and ours", () => {
  const result = imageToolRunResult();
  const body = encodeResponsesResult(
    { ...result, content: [...result.content, { type: "server-tool-call", call: imageCalls(false)[0] }] },
    { usage, costMicroUsd: 70_000, finishReason: "stop" },
    context,
  );
  assert.deepEqual(responsesResponseSchema.parse(body), body, "our schema lists every field");
  const validator = loadOpenApiValidator();
  assert.deepEqual(validator.validate("Response", body), []);
  // The check can fail: an image item without its result is reported.
  const broken = { ...body, output: [{ id: "ig_x", type: "image_generation_call", status: "completed" }] };
  assert.ok(validator.validate("Response", broken).some((violation) => violation.includes("result")));
});
