import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AFTER_TEXT,
  BEFORE_TEXT,
  GENERATED_BASE64,
  imageToolRunResult,
} from "../../../test/helpers/image-tool-run.js";
import { loadOpenApiValidator } from "../../../test/helpers/openapi-schema-validator.js";
import type { CanonicalResult } from "../../canonical/index.js";
import { createEmptyUsage } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import type { EncodeContext } from "../ingress-format.js";
import { decodeChatRequest } from "./decode-request.js";
import { encodeChatResult } from "./encode-result.js";
import { chatCompletionResponseSchema } from "./response-schema.js";

const context: EncodeContext = {
  requestId: "req_9",
  model: "anthropic/claude-sonnet-4.5",
  createdAt: 1_750_000_000,
};

function settle(result: CanonicalResult, costMicroUsd = 0): Settlement {
  return { usage: result.usage, costMicroUsd, finishReason: result.finishReason };
}

test("a text result becomes a chat.completion object", () => {
  const result: CanonicalResult = {
    content: [
      { type: "text", text: "Hello" },
      { type: "text", text: " there" },
    ],
    finishReason: "stop-sequence",
    usage: {
      ...createEmptyUsage(),
      inputTokens: 10,
      outputTokens: 3,
      cachedInputTokens: 4,
      reasoningTokens: 0,
    },
  };
  assert.deepEqual(encodeChatResult(result, settle(result, 2_500_000), context), {
    id: "gen-req_9",
    object: "chat.completion",
    created: 1_750_000_000,
    model: "anthropic/claude-sonnet-4.5",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "Hello there", refusal: null },
        finish_reason: "stop",
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 3,
      total_tokens: 13,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 0 },
      cost: 2.5,
    },
  });
});

test("tool calls, reasoning and cache writes: content null, arguments exact, details only with state", () => {
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "Need the weather." },
      { type: "tool-call", id: "call_1", name: "get_weather", arguments: '{"city": "Oslo"}' },
    ],
    finishReason: "tool-calls",
    usage: {
      ...createEmptyUsage(),
      inputTokens: 50,
      outputTokens: 20,
      cacheWriteTokens: 30,
      cacheWrite1hTokens: 5,
      reasoningTokens: 12,
    },
  };
  const encoded = encodeChatResult(result, settle(result, 1), context);
  assert.deepEqual(encoded.choices[0].message, {
    role: "assistant",
    content: null,
    refusal: null,
    reasoning: "Need the weather.",
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Oslo"}' } },
    ],
  });
  assert.equal(encoded.choices[0].finish_reason, "tool_calls");
  assert.deepEqual(encoded.usage.prompt_tokens_details, { cached_tokens: 0, cache_write_tokens: 35 });
  assert.deepEqual(encoded.usage.completion_tokens_details, { reasoning_tokens: 12 });
  assert.equal(encoded.usage.cost, 0.000001);
});

test("reasoning_details round-trip: what the encoder returns, the decoder turns back into the same parts", () => {
  const thinking = {
    providerKind: "anthropic",
    upstreamModel: "claude-sonnet-4-5",
    signature: "EqQBCkgIARABGAIiQL",
  };
  const result: CanonicalResult = {
    content: [
      { type: "reasoning", text: "Step one.", providerState: thinking },
      {
        type: "reasoning",
        text: "",
        providerState: { providerKind: "anthropic", upstreamModel: "claude-sonnet-4-5", redactedData: "ENC" },
      },
      { type: "text", text: "Calling." },
      {
        type: "tool-call",
        id: "toolu_1",
        name: "f",
        arguments: "{}",
        providerState: { providerKind: "google", upstreamModel: "gemini-3-pro", signature: "gsig" },
      },
    ],
    finishReason: "tool-calls",
    usage: createEmptyUsage(),
  };
  const message = encodeChatResult(result, settle(result), context).choices[0].message;
  assert.equal(message.reasoning, "Step one.");
  assert.equal(message.reasoning_details?.length, 3);
  const decoded = decodeChatRequest({
    model: "a/b",
    messages: [{ role: "user", content: "go" }, message],
  });
  assert.deepEqual(decoded.messages[1], { role: "assistant", content: result.content });
});

test("finish reasons map to the four chat values", () => {
  const expectations = {
    stop: "stop",
    "stop-sequence": "stop",
    length: "length",
    "context-window": "length",
    "tool-calls": "tool_calls",
    "content-filter": "content_filter",
    refusal: "content_filter",
    pause: "stop",
    error: "stop",
    other: "stop",
  } as const;
  for (const [reason, expected] of Object.entries(expectations)) {
    const result: CanonicalResult = {
      content: [],
      finishReason: reason as CanonicalResult["finishReason"],
      usage: createEmptyUsage(),
    };
    assert.equal(
      encodeChatResult(result, settle(result), context).choices[0].finish_reason,
      expected,
      reason,
    );
  }
});

/** Round 1: text and a web search; round 2: an answer citing two sources (one span after an emoji). */
const searchedResult: CanonicalResult = {
  content: [
    { type: "text", text: "Let me look. " },
    {
      type: "server-tool-call",
      call: { id: "call_1", tool: "web_search", input: { query: "capital of France" }, events: true },
    },
    {
      type: "server-tool-result",
      result: {
        callId: "call_1",
        tool: "web_search",
        input: { query: "capital of France" },
        status: "completed",
        output: {
          kind: "search",
          query: "capital of France",
          sources: [{ url: "https://example.com/fr", title: "France", snippet: "Paris…", pageAge: null }],
        },
        costMicroUsd: 5000,
        durationMs: 80,
        events: true,
      },
    },
    { type: "reasoning", text: "The source says Paris." },
    {
      type: "text",
      text: "Paris 🇫🇷 is the capital (example.com). Big (wiki).",
      citations: [
        {
          url: "https://example.com/fr",
          title: "France",
          startIndex: 26,
          endIndex: 39,
          citedText: "Paris is the capital",
        },
        { url: "https://wiki.test/p", title: "wiki.test", startIndex: 45, endIndex: 51, citedText: "" },
      ],
    },
  ],
  finishReason: "stop",
  usage: createEmptyUsage(),
};

test("server tools: the calls are not rendered; citations become annotations indexing into the joined content", () => {
  const message = encodeChatResult(searchedResult, settle(searchedResult), context).choices[0].message;
  assert.deepEqual(message, {
    role: "assistant",
    content: "Let me look. Paris 🇫🇷 is the capital (example.com). Big (wiki).",
    refusal: null,
    reasoning: "The source says Paris.",
    annotations: [
      {
        type: "url_citation",
        url_citation: { url: "https://example.com/fr", title: "France", start_index: 39, end_index: 52 },
      },
      {
        type: "url_citation",
        url_citation: { url: "https://wiki.test/p", title: "wiki.test", start_index: 58, end_index: 64 },
      },
    ],
  });
  // Offsets are UTF-16 units into content, end exclusive: the spans are exactly the cited text.
  const spans = message.annotations!.map(({ url_citation: span }) =>
    message.content!.slice(span.start_index, span.end_index),
  );
  assert.deepEqual(spans, ["(example.com)", "(wiki)"]);
});

test("an answer without citations has no annotations key, not an empty array", () => {
  const result: CanonicalResult = {
    ...searchedResult,
    content: searchedResult.content.map((part) =>
      part.type === "text" ? { type: "text", text: part.text } : part,
    ),
  };
  const message = encodeChatResult(result, settle(result), context).choices[0].message;
  assert.equal("annotations" in message, false);
  assert.equal(message.content, "Let me look. Paris 🇫🇷 is the capital (example.com). Big (wiki).");
});

test("the response schema behind /openapi.json keeps every field of an answer with annotations", () => {
  const encoded = encodeChatResult(searchedResult, settle(searchedResult), context);
  // zod drops keys a schema does not list, so a field missing from the schema shows as a difference.
  assert.deepEqual(chatCompletionResponseSchema.parse(encoded), encoded);
});

test("an answer with annotations validates against CreateChatCompletionResponse of OpenAI's OpenAPI document", () => {
  const validator = loadOpenApiValidator();
  const encoded = encodeChatResult(searchedResult, settle(searchedResult), context);
  assert.deepEqual(validator.validate("CreateChatCompletionResponse", encoded), []);
});

test("an answer with annotations, sent back as the next turn's assistant message, decodes to its text alone", () => {
  const message = encodeChatResult(searchedResult, settle(searchedResult), context).choices[0].message;
  const decoded = decodeChatRequest({
    model: "a/b",
    messages: [{ role: "user", content: "Capital of France?" }, message, { role: "user", content: "Thanks" }],
  });
  assert.deepEqual(decoded.messages[1], {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The source says Paris." },
      { type: "text", text: "Let me look. Paris 🇫🇷 is the capital (example.com). Big (wiki)." },
    ],
  });
});

test("generated images: message.images lists each image made, in order, as data URLs; failed ones add nothing", () => {
  const result = imageToolRunResult();
  const encoded = encodeChatResult(result, settle(result, 64_000), context);
  assert.deepEqual(encoded.choices[0].message, {
    role: "assistant",
    content: BEFORE_TEXT + AFTER_TEXT,
    refusal: null,
    images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${GENERATED_BASE64}` } }],
  });
  assert.equal(encoded.usage.cost, 0.064);
  assert.deepEqual(
    chatCompletionResponseSchema.parse(encoded),
    encoded,
    "the schema behind /openapi.json lists it",
  );
  const validator = loadOpenApiValidator();
  assert.deepEqual(validator.validate("CreateChatCompletionResponse", encoded), []);
});

test("an answer with images, sent back as the next turn's assistant message, decodes to its text alone", () => {
  const result = imageToolRunResult();
  const message = encodeChatResult(result, settle(result), context).choices[0].message;
  const decoded = decodeChatRequest({
    model: "a/b",
    messages: [{ role: "user", content: "Draw a fox" }, message, { role: "user", content: "Thanks" }],
  });
  assert.deepEqual(decoded.messages[1], {
    role: "assistant",
    content: [{ type: "text", text: BEFORE_TEXT + AFTER_TEXT }],
  });
});
