import assert from "node:assert/strict";
import { test } from "node:test";
import type { CanonicalMessage, OpaqueReasoningState } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { convertMessages } from "./convert-messages.js";

const MODEL = "claude-sonnet-4-5";
const SIGNATURE = "EqEECkYICxgCKkAo3UA4WwDbB8ihhpykVCsPx6iMzwNTNP8dePIgYjNpu2EWrt5JbApWWONEZaf5w469+/=";

function convert(messages: CanonicalMessage[]) {
  return convertMessages(messages, { upstreamModel: MODEL });
}

function state(fields: Partial<OpaqueReasoningState>): OpaqueReasoningState {
  return { providerKind: "anthropic", upstreamModel: MODEL, ...fields };
}

test("user content: text with cache_control, images by base64 and URL, PDFs and text documents", () => {
  const turns = convert([
    {
      role: "user",
      name: "alice",
      content: [
        { type: "text", text: "Describe these", cacheControl: { type: "ephemeral" } },
        {
          type: "image",
          source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" },
          detail: "low",
        },
        { type: "image", source: { kind: "url", url: "https://example.com/cat.jpg" } },
        {
          type: "file",
          source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" },
          filename: "a.pdf",
          cacheControl: { type: "ephemeral", ttl: "1h" },
        },
        { type: "file", source: { kind: "url", url: "https://example.com/report.pdf" }, title: "Report" },
        {
          type: "file",
          source: {
            kind: "base64",
            mediaType: "text/plain; charset=utf-8",
            data: Buffer.from("héllo").toString("base64"),
          },
          filename: "notes.txt",
        },
      ],
    },
  ]);
  assert.deepEqual(turns, [
    {
      role: "user",
      content: [
        { type: "text", text: "Describe these", cache_control: { type: "ephemeral" } },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        {
          type: "document",
          source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
          title: "a.pdf",
          cache_control: { type: "ephemeral", ttl: "1h" },
        },
        { type: "document", source: { type: "url", url: "https://example.com/report.pdf" }, title: "Report" },
        {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "héllo" },
          title: "notes.txt",
        },
      ],
    },
  ]);
});

test("a PDF sent as an image (data:application/pdf URL) becomes a document, also in tool results", () => {
  const pdf = { kind: "base64" as const, mediaType: "application/pdf;name=x.pdf", data: "JVBERi0=" };
  const turns = convert([
    { role: "user", content: [{ type: "image", source: pdf }] },
    { role: "assistant", content: [{ type: "tool-call", id: "toolu_1", name: "read", arguments: "{}" }] },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "toolu_1", content: [{ type: "image", source: pdf }] }],
    },
  ]);
  const document = {
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
  };
  assert.deepEqual(turns[0].content, [document]);
  assert.deepEqual(turns[2].content, [{ type: "tool_result", tool_use_id: "toolu_1", content: [document] }]);
});

test("an unsupported file is an invalid_request naming the part", () => {
  assert.throws(
    () =>
      convert([
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text", text: "yes?" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "read this" },
            {
              type: "file",
              source: {
                kind: "base64",
                mediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                data: "UEsDBA==",
              },
              filename: "a.docx",
            },
          ],
        },
      ]),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, "messages[2].content[1]");
      assert.match(error.message, /wordprocessingml/);
      return true;
    },
  );
});

test("own thinking state is forwarded byte-identical, redacted thinking as data", () => {
  const turns = convert([
    { role: "user", content: [{ type: "text", text: "Weather?" }] },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Need the tool.", providerState: state({ signature: SIGNATURE }) },
        {
          type: "reasoning",
          text: "",
          providerState: state({ redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4a" }),
        },
        // Signature-only block (display omitted): empty text still round-trips.
        { type: "reasoning", text: "", providerState: state({ signature: "sig-only" }) },
        { type: "tool-call", id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris"}' },
      ],
    },
  ]);
  assert.deepEqual(turns[1], {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Need the tool.", signature: SIGNATURE },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
      { type: "thinking", thinking: "", signature: "sig-only" },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
    ],
  });
});

test("foreign, other-model and missing reasoning state is dropped, never sent as text", () => {
  const turns = convert([
    { role: "user", content: [{ type: "text", text: "Hi" }] },
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "gemini thoughts",
          providerState: { providerKind: "google", upstreamModel: MODEL, signature: "g-sig" },
        },
        {
          type: "reasoning",
          text: "older claude",
          providerState: state({ upstreamModel: "claude-3-7-sonnet", signature: "s" }),
        },
        { type: "reasoning", text: "no state at all" },
        {
          type: "reasoning",
          text: "openai summary",
          providerState: { providerKind: "openai-responses", upstreamModel: "", encryptedContent: "enc" },
        },
        // Native state a client brought along (model unknown) is the provider's to validate.
        {
          type: "reasoning",
          text: "native",
          providerState: state({ upstreamModel: "", signature: "native-sig" }),
        },
        { type: "text", text: "Hello!" },
      ],
    },
  ]);
  assert.deepEqual(turns[1].content, [
    { type: "thinking", thinking: "native", signature: "native-sig" },
    { type: "text", text: "Hello!" },
  ]);
  assert.doesNotMatch(JSON.stringify(turns), /gemini thoughts|older claude|no state at all|openai summary/);
});

test("tool_use input: parsed arguments; invalid JSON or a non-object becomes {}", () => {
  const turns = convert([
    { role: "user", content: [{ type: "text", text: "go" }] },
    {
      role: "assistant",
      content: [
        { type: "tool-call", id: "a", name: "f", arguments: '{"x":[1,{"y":null}]}' },
        { type: "tool-call", id: "b", name: "f", arguments: '{"x":' },
        { type: "tool-call", id: "c", name: "f", arguments: "[1,2]" },
        { type: "tool-call", id: "d", name: "f", arguments: "" },
      ],
    },
  ]);
  assert.deepEqual(
    turns[1].content.map((block) => (block.type === "tool_use" ? block.input : block)),
    [{ x: [1, { y: null }] }, {}, {}, {}],
  );
});

test("empty and whitespace-only text blocks are never sent; an emptied assistant turn is dropped", () => {
  const turns = convert([
    {
      role: "user",
      content: [
        { type: "text", text: "first" },
        { type: "text", text: "" },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: " \n\t" }] },
    { role: "user", content: [{ type: "text", text: "second" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "" },
        { type: "tool-call", id: "toolu_1", name: "f", arguments: "{}" },
      ],
    },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "toolu_1", content: [{ type: "text", text: "" }] }],
    },
  ]);
  assert.deepEqual(turns, [
    {
      role: "user",
      content: [
        { type: "text", text: "first" },
        { type: "text", text: "second" },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1" }] },
  ]);
});

test("tool results: one user turn per round, images survive, is_error kept, text after results merged", () => {
  const turns = convert([
    { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
    {
      role: "assistant",
      content: [
        { type: "tool-call", id: "toolu_p", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "tool-call", id: "toolu_r", name: "get_weather", arguments: '{"city":"Rome"}' },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "toolu_p", content: [{ type: "text", text: "18°C" }] },
        {
          type: "tool-result",
          toolCallId: "toolu_r",
          isError: true,
          content: [
            { type: "text", text: "see chart", cacheControl: { type: "ephemeral" } },
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "AAAA" } },
          ],
        },
      ],
    },
    { role: "user", content: [{ type: "text", text: "And Berlin?" }] },
  ]);
  assert.equal(turns.length, 3);
  assert.deepEqual(turns[2], {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_p", content: [{ type: "text", text: "18°C" }] },
      {
        type: "tool_result",
        tool_use_id: "toolu_r",
        content: [
          { type: "text", text: "see chart", cache_control: { type: "ephemeral" } },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
        ],
        is_error: true,
      },
      { type: "text", text: "And Berlin?" },
    ],
  });
});

test("tool results after user text in the same merged turn still come first", () => {
  const turns = convert([
    { role: "assistant", content: [{ type: "tool-call", id: "t", name: "f", arguments: "{}" }] },
    { role: "user", content: [{ type: "text", text: "(the user typed while the tool ran)" }] },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "t", content: [{ type: "text", text: "ok" }] }],
    },
  ]);
  assert.deepEqual(
    turns[1].content.map((block) => block.type),
    ["tool_result", "text"],
  );
});

test("consecutive assistant turns merge into one", () => {
  const turns = convert([
    { role: "user", content: [{ type: "text", text: "q" }] },
    { role: "assistant", content: [{ type: "text", text: "part one" }] },
    { role: "assistant", content: [{ type: "text", text: "part two" }] },
  ]);
  assert.deepEqual(turns[1], {
    role: "assistant",
    content: [
      { type: "text", text: "part one" },
      { type: "text", text: "part two" },
    ],
  });
});

test("cache breakpoints on tool calls and tool results reach Anthropic unchanged", () => {
  const messages: CanonicalMessage[] = [
    { role: "user", content: [{ type: "text", text: "read it" }] },
    {
      role: "assistant",
      content: [
        {
          type: "tool-call",
          id: "toolu_1",
          name: "read",
          arguments: "{}",
          cacheControl: { type: "ephemeral" },
        },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "toolu_1",
          content: [{ type: "text", text: "body" }],
          cacheControl: { type: "ephemeral", ttl: "1h" },
        },
      ],
    },
  ];
  const converted = convertMessages(messages, { upstreamModel: "claude-x" }) as unknown as Array<{
    content: Array<Record<string, unknown>>;
  }>;
  assert.deepEqual(converted[1].content[0].cache_control, { type: "ephemeral" });
  assert.deepEqual(converted[2].content[0].cache_control, { type: "ephemeral", ttl: "1h" });
});

test("merging runs of one role's turns is linear: 100,000 of them in milliseconds", () => {
  const messages: CanonicalMessage[] = Array.from({ length: 100_000 }, (_, index) => ({
    role: "user",
    content: [{ type: "text", text: `part ${index}` }],
  }));
  const started = performance.now();
  const turns = convertMessages(messages, { upstreamModel: "claude-x" });
  const elapsed = performance.now() - started;
  assert.equal(turns.length, 1);
  assert.equal(turns[0].content.length, 100_000);
  // Rebuilding the merged array per turn took 54 s for this.
  assert.ok(elapsed < 2_000, `${elapsed.toFixed(0)} ms`);
});

test("a turn's blocks of types the gateway does not know go in their places; those of another wire family are left out", () => {
  const searchResult = { type: "search_result", source: "s", title: "t", content: [] };
  const turns = convert([
    {
      role: "user",
      content: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      extraBlocks: [
        { family: "anthropic_messages", param: "messages[0].content[0]", index: 0, block: searchResult },
        { family: "responses", param: "input[0]", index: 2, block: { type: "compaction" } },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "other model",
          providerState: state({ upstreamModel: "x", signature: "s" }),
        },
        { type: "text", text: "c" },
      ],
      extraBlocks: [
        { family: "anthropic_messages", param: "messages[1].content[2]", index: 2, block: { type: "new" } },
      ],
    },
    {
      role: "user",
      content: [],
      extraBlocks: [{ family: "responses", param: "input[3]", index: 0, block: { type: "compaction" } }],
    },
  ]);
  assert.deepEqual(turns, [
    { role: "user", content: [searchResult, { type: "text", text: "a" }, { type: "text", text: "b" }] },
    // The dropped reasoning still holds its place, so the block lands after "c", where it was sent.
    { role: "assistant", content: [{ type: "text", text: "c" }, { type: "new" }] },
  ]);
});
