import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssistantContentPart, CanonicalMessage, OpaqueReasoningState } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { convertAssistantParts, convertContents, SKIP_SIGNATURE_VALIDATOR } from "./convert-contents.js";

const MODEL = "gemini-2.5-flash";
const GEMINI_3 = "gemini-3-pro-preview";

const own = (signature: string, upstreamModel = MODEL): OpaqueReasoningState => ({
  providerKind: "google",
  upstreamModel,
  signature,
});

const convert = (messages: CanonicalMessage[], upstreamModel = MODEL) =>
  convertContents([], messages, { upstreamModel }).contents;

const assistant = (content: AssistantContentPart[], upstreamModel = MODEL) =>
  convertAssistantParts(content, upstreamModel, "messages[1]");

test("user text, images and files: inline data, file URLs, empty text dropped", () => {
  const contents = convert([
    {
      role: "user",
      content: [
        { type: "text", text: "Look" },
        { type: "text", text: "" },
        { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
        { type: "image", source: { kind: "url", url: "https://example.com/cat.webp" } },
        { type: "image", source: { kind: "url", url: "https://cdn.example.com/img?id=1" } },
        { type: "image", source: { kind: "url", url: "data:image/gif;base64,R0lGOD==" } },
        {
          type: "file",
          source: { kind: "base64", mediaType: "application/pdf; name=a.pdf", data: "JVBERi0=" },
        },
        { type: "file", source: { kind: "url", url: "https://example.com/report.pdf" } },
        {
          type: "file",
          source: { kind: "url", url: "https://example.com/download?id=9" },
          filename: "notes.txt",
        },
        { type: "file", source: { kind: "url", url: "https://www.youtube.com/watch?v=lCdaVNyHtjU" } },
      ],
    },
  ]);
  assert.deepEqual(contents, [
    {
      role: "user",
      parts: [
        { text: "Look" },
        { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
        { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp" } },
        { fileData: { mimeType: "image/jpeg", fileUri: "https://cdn.example.com/img?id=1" } },
        { inlineData: { mimeType: "image/gif", data: "R0lGOD==" } },
        { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
        { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/report.pdf" } },
        { fileData: { mimeType: "text/plain", fileUri: "https://example.com/download?id=9" } },
        { fileData: { mimeType: "video/mp4", fileUri: "https://www.youtube.com/watch?v=lCdaVNyHtjU" } },
      ],
    },
  ]);
});

test("URLs Gemini cannot take are refused with invalid_request naming the part", () => {
  const attempt = (url: string, type: "image" | "file") => () =>
    convert([
      {
        role: "user",
        content: [
          { type: "text", text: "x" },
          { type, source: { kind: "url", url } },
        ],
      },
    ]);
  const refused = (pattern: RegExp) => (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, "invalid_request");
    assert.equal(error.param, "messages[0].content[1]");
    assert.match(error.message, pattern);
    return true;
  };
  assert.throws(attempt("file:///etc/passwd", "file"), refused(/http\(s\).*file:/));
  assert.throws(attempt("gs://bucket/a.pdf", "file"), refused(/gs:/));
  assert.throws(attempt("https://example.com/download?id=1", "file"), refused(/media type/));
  assert.throws(attempt("not a url", "image"), refused(/not a valid URL/));
});

test("tool results: functionResponse named from the history, output/error convention, JSON objects kept", () => {
  const contents = convert([
    { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
    {
      role: "assistant",
      content: [
        { type: "tool-call", id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "tool-call", id: "call_b", name: "get_weather", arguments: '{"city":"Rome"}' },
        { type: "tool-call", id: "call_c", name: "lookup_id", arguments: "" },
      ],
    },
    {
      role: "tool",
      content: [
        { toolCallId: "call_a", type: "tool-result", content: [{ type: "text", text: "18°C, cloudy" }] },
        {
          toolCallId: "call_b",
          type: "tool-result",
          content: [{ type: "text", text: '{"temp": 24, "sky": "clear"}' }],
        },
        {
          toolCallId: "call_c",
          type: "tool-result",
          isError: true,
          content: [{ type: "text", text: '{"id": 12345678901234567890}' }],
        },
      ],
    },
  ]);
  assert.deepEqual(contents[1], {
    role: "model",
    parts: [
      { functionCall: { name: "get_weather", args: { city: "Paris" } } },
      { functionCall: { name: "get_weather", args: { city: "Rome" } } },
      { functionCall: { name: "lookup_id", args: {} } },
    ],
  });
  assert.deepEqual(contents[2], {
    role: "user",
    parts: [
      { functionResponse: { name: "get_weather", response: { output: "18°C, cloudy" } } },
      { functionResponse: { name: "get_weather", response: { temp: 24, sky: "clear" } } },
      // An integer beyond 2^53 would be rounded by re-serialising: sent as text instead.
      { functionResponse: { name: "lookup_id", response: { error: '{"id": 12345678901234567890}' } } },
    ],
  });
});

test("images in tool results follow the function responses in the same user turn", () => {
  const contents = convert([
    { role: "user", content: [{ type: "text", text: "Read the screenshot" }] },
    {
      role: "assistant",
      content: [{ type: "tool-call", id: "call_1", name: "read_file", arguments: '{"path":"a.png"}' }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          content: [
            { type: "text", text: "Image read." },
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR=" } },
          ],
        },
      ],
    },
    { role: "user", content: [{ type: "text", text: "What does it show?" }] },
  ]);
  assert.equal(contents.length, 3, "tool turn and the following user turn merge");
  assert.deepEqual(contents[2], {
    role: "user",
    parts: [
      { functionResponse: { name: "read_file", response: { output: "Image read." } } },
      { inlineData: { mimeType: "image/png", data: "iVBOR=" } },
      { text: "What does it show?" },
    ],
  });
});

test("a tool result for an unknown call id is invalid_request", () => {
  assert.throws(
    () =>
      convert([
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "call_zzz", content: [] }] },
      ]),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === "invalid_request" &&
      error.param === "messages[1].content[0]" &&
      /call_zzz/.test(error.message),
  );
});

test("tool-call arguments must be a JSON object", () => {
  const call = (args: string) => () =>
    assistant([{ type: "tool-call", id: "call_1", name: "f", arguments: args }]);
  assert.throws(call("{not json"), /not valid JSON/);
  assert.throws(call("[1,2]"), /not a JSON object/);
  assert.deepEqual(call('  {"a":[1,{"b":null}]} ')(), [
    { functionCall: { name: "f", args: { a: [1, { b: null }] } } },
  ]);
});

test("consecutive turns of one role merge; turns left empty disappear", () => {
  const contents = convert([
    { role: "user", content: [{ type: "text", text: "one" }] },
    { role: "user", content: [{ type: "text", text: "two" }] },
    { role: "assistant", content: [{ type: "reasoning", text: "foreign thoughts" }] },
    { role: "assistant", content: [{ type: "text", text: "" }] },
    { role: "user", content: [{ type: "text", text: "three" }] },
  ]);
  assert.deepEqual(contents, [
    { role: "user", parts: [{ text: "one" }, { text: "two" }, { text: "three" }] },
  ]);
});

test("B13: a signature on a function call comes back on that call, byte-identical", () => {
  const signature = "Es8FCswFAXLI2nxFGW9oAYt0fTQoHlYcudYTgqNXlir9nzbXoqFXqLY9sWOIMaevBSmRIl/38GhJB+V+cQ==";
  const parts = assistant([
    {
      type: "tool-call",
      id: "call_1",
      name: "generate_topic",
      arguments: "{}",
      providerState: own(signature),
    },
    { type: "tool-call", id: "call_2", name: "generate_topic", arguments: "{}" },
    { type: "tool-call", id: "call_3", name: "generate_topic", arguments: "{}" },
  ]);
  assert.deepEqual(parts, [
    { functionCall: { name: "generate_topic", args: {} }, thoughtSignature: signature },
    { functionCall: { name: "generate_topic", args: {} } },
    { functionCall: { name: "generate_topic", args: {} } },
  ]);
});

test("B13: a signature that followed its text (empty reasoning after it) goes back on that text", () => {
  const parts = assistant([
    { type: "reasoning", text: "thinking about streets" },
    { type: "text", text: "Look both ways." },
    { type: "reasoning", text: "", providerState: own("sig-text") },
  ]);
  assert.deepEqual(parts, [{ text: "Look both ways.", thoughtSignature: "sig-text" }]);
});

test("B13: an empty signed part with no text before it is restored in place", () => {
  // Where it stood: after a call, or (histories from gateways that put it first) before the text.
  const parts = assistant([
    { type: "reasoning", text: "", providerState: own("sig-first") },
    { type: "text", text: "There are 3 r's." },
    { type: "tool-call", id: "call_1", name: "f", arguments: "{}" },
    { type: "reasoning", text: "", providerState: own("sig-end") },
  ]);
  assert.deepEqual(parts, [
    { text: "", thoughtSignature: "sig-first" },
    { text: "There are 3 r's." },
    { functionCall: { name: "f", args: {} } },
    { text: "", thoughtSignature: "sig-end" },
  ]);
});

test("B13: a signed thought part goes back as that thought part", () => {
  const parts = assistant([
    { type: "reasoning", text: "**Plan**", providerState: own("sig-thought") },
    { type: "text", text: "Done." },
  ]);
  assert.deepEqual(parts, [
    { text: "**Plan**", thought: true, thoughtSignature: "sig-thought" },
    { text: "Done." },
  ]);
});

test("B13: a carried signature never displaces a call's own signature", () => {
  const parts = assistant([
    { type: "reasoning", text: "", providerState: own("sig-a") },
    { type: "tool-call", id: "call_1", name: "f", arguments: "{}", providerState: own("sig-b") },
  ]);
  assert.deepEqual(parts, [
    { text: "", thoughtSignature: "sig-a" },
    { functionCall: { name: "f", args: {} }, thoughtSignature: "sig-b" },
  ]);
});

test("B14: foreign and other-model state is dropped; native state without a model is kept", () => {
  const parts = assistant([
    {
      type: "reasoning",
      text: "claude thinking",
      providerState: { providerKind: "anthropic", upstreamModel: "claude-x", signature: "EqQB" },
    },
    { type: "reasoning", text: "", providerState: own("sig-other-model", "gemini-2.5-pro") },
    { type: "text", text: "Answer" },
    {
      type: "tool-call",
      id: "call_1",
      name: "f",
      arguments: "{}",
      providerState: { providerKind: "google", upstreamModel: "", signature: "native-sig" },
    },
  ]);
  assert.deepEqual(parts, [
    { text: "Answer" },
    { functionCall: { name: "f", args: {} }, thoughtSignature: "native-sig" },
  ]);
  assert.ok(!JSON.stringify(parts).includes("claude thinking"), "foreign reasoning never becomes text");
});

test("Gemini 3: the first unsigned function call of a step gets Google's skip-validator signature", () => {
  const content: AssistantContentPart[] = [
    { type: "text", text: "Let me check." },
    {
      type: "tool-call",
      id: "call_1",
      name: "f",
      arguments: "{}",
      providerState: own("claude-sig", "claude-x"),
    },
    { type: "tool-call", id: "call_2", name: "f", arguments: "{}" },
  ];
  assert.deepEqual(assistant(content, GEMINI_3), [
    { text: "Let me check." },
    { functionCall: { name: "f", args: {} }, thoughtSignature: SKIP_SIGNATURE_VALIDATOR },
    { functionCall: { name: "f", args: {} } },
  ]);
  // Gemini 2.5 does not validate: nothing is invented there.
  assert.deepEqual(assistant(content, MODEL)[1], { functionCall: { name: "f", args: {} } });
  // An own signature is never replaced.
  const signed = assistant(
    [{ type: "tool-call", id: "call_1", name: "f", arguments: "{}", providerState: own("real", GEMINI_3) }],
    GEMINI_3,
  );
  assert.equal(signed[0]?.thoughtSignature, "real");
});

test("merging runs of one role's turns appends part by part: a turn of 300,000 parts merges", () => {
  const parts = Array.from({ length: 300_000 }, (_, index) => ({ type: "text" as const, text: `p${index}` }));
  const messages: CanonicalMessage[] = [
    { role: "user", content: [{ type: "text", text: "first" }] },
    { role: "user", content: parts },
  ];
  // push(...parts) overflowed the stack past ~100,000 arguments.
  const { contents } = convertContents([], messages, { upstreamModel: "gemini-x" });
  assert.equal(contents.length, 1);
  assert.equal(contents[0].parts.length, 300_001);
});
