import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createTestRequest } from "../../test/helpers/adapter-inputs.js";
import { createPdf, createPngHeader } from "../../test/helpers/media-fixtures.js";
import type { CanonicalRequest, UserContentPart } from "../canonical/index.js";
import { boundInputTokens, type UpstreamInputRules } from "./bound-input-tokens.js";

const BYTES: UpstreamInputRules = {
  tokenizer: "bytes",
  imageTokens: (size) => (size === undefined ? 5_000 : size.width),
  pdfPageTokens: 4_000,
  toolPromptTokens: 300,
};
const O200K: UpstreamInputRules = { ...BYTES, tokenizer: "o200k" };
const CONTEXT = 1_000_000;

function ask(...content: UserContentPart[]): CanonicalRequest {
  return createTestRequest({ messages: [{ role: "user", content }] });
}

const FRAMING = 1 + 4 * 2; // one text, one message

test("text: UTF-8 bytes where the tokenizer is unknown, the o200k count where it is o200k", () => {
  const text = "Grüße aus Köln — 日本語も少し。";
  assert.equal(
    boundInputTokens(ask({ type: "text", text }), BYTES, CONTEXT),
    Buffer.byteLength(text) + FRAMING,
  );
  assert.equal(boundInputTokens(ask({ type: "text", text }), O200K, CONTEXT), countTokens(text) + FRAMING);
});

test("the model's context length caps the bound: a longer prompt is refused upstream, not billed", () => {
  const request = ask({ type: "text", text: "y".repeat(50_000) });
  assert.equal(boundInputTokens(request, BYTES, 20_000), 20_000);
  // A file fetched by the upstream has no bound of its own: the whole context.
  const byUrl = ask({ type: "file", source: { kind: "url", url: "https://example.com/report.pdf" } });
  assert.equal(boundInputTokens(byUrl, BYTES, 20_000), 20_000);
});

test("images: the kind's rule from the header's size, its most when the size is unknown", () => {
  const png = (width: number) => ({
    kind: "base64" as const,
    mediaType: "image/png",
    data: createPngHeader(width, 10).toString("base64"),
  });
  assert.equal(boundInputTokens(ask({ type: "image", source: png(640) }), BYTES, CONTEXT), 640 + 8);
  assert.equal(
    boundInputTokens(
      ask({ type: "image", source: { kind: "url", url: "https://example.com/a.png" } }),
      BYTES,
      CONTEXT,
    ),
    5_000 + 8,
  );
  const inToolResult = createTestRequest({
    messages: [
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c", content: [{ type: "image", source: png(99) }] }],
      },
    ],
  });
  assert.equal(boundInputTokens(inToolResult, BYTES, CONTEXT), 99 + 4 * 2);
});

test("documents: text files by their bytes, PDFs by their pages, the rest unbounded", () => {
  const file = (mediaType: string, bytes: Buffer) => ({
    type: "file" as const,
    source: { kind: "base64" as const, mediaType, data: bytes.toString("base64") },
  });
  const text = Buffer.from("Line one\nLine two\n".repeat(1_000));
  const textBound = boundInputTokens(ask(file("text/plain", text)), BYTES, CONTEXT);
  assert.ok(textBound >= text.length && textBound < text.length + 100, `${textBound}`);
  const pdfBound = boundInputTokens(
    ask(file("application/pdf", createPdf(12, { packed: true }))),
    BYTES,
    CONTEXT,
  );
  assert.ok(pdfBound >= 12 * 4_000 && pdfBound < 12 * 4_000 + 100, `${pdfBound}`);
  // Page count unknown (no page objects), audio, office files: the whole context.
  assert.equal(boundInputTokens(ask(file("application/pdf", Buffer.alloc(1_000))), BYTES, CONTEXT), CONTEXT);
  assert.equal(boundInputTokens(ask(file("audio/mpeg", Buffer.alloc(1_000))), BYTES, CONTEXT), CONTEXT);
});

test("tools, the response schema, fields passed through and opaque state are counted too", () => {
  const base = boundInputTokens(ask({ type: "text", text: "hi" }), BYTES, CONTEXT);
  const withTools = createTestRequest({
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [{ name: "lookup", parameters: { type: "object" } }],
  });
  const toolsJson = JSON.stringify(withTools.tools);
  assert.equal(boundInputTokens(withTools, BYTES, CONTEXT), base + toolsJson.length + 1 + 300 + 16);
  const withSchema = createTestRequest({
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    responseFormat: { type: "json_schema", name: "out", schema: { type: "object", properties: {} } },
    passthrough: { prediction: { type: "content", content: "abc" } },
  });
  const extra =
    JSON.stringify({ type: "object", properties: {} }).length + JSON.stringify(withSchema.passthrough).length;
  assert.equal(boundInputTokens(withSchema, BYTES, CONTEXT), base + extra);
  const withState = createTestRequest({
    messages: [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        content: [
          {
            type: "reasoning",
            text: "",
            providerState: { providerKind: "x", upstreamModel: "", encryptedContent: "e".repeat(500) },
          },
        ],
      },
    ],
  });
  assert.ok(boundInputTokens(withState, BYTES, CONTEXT) >= base + 500);
});

test("a rule's added bytes (Gemini's inlined schemas) are counted", () => {
  const request = ask({ type: "text", text: "hi" });
  const added = boundInputTokens(request, { ...BYTES, measureAddedBytes: () => 1_234 }, CONTEXT);
  assert.equal(added, boundInputTokens(request, BYTES, CONTEXT) + 1_234);
});
