import assert from "node:assert/strict";
import { test } from "node:test";
import { createPngHeader } from "../../../test/helpers/media-fixtures.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { estimateTextTokens } from "../../metering/estimate-usage.js";
import {
  countMessagesTokens,
  FORCED_TOOL_USE_PROMPT_TOKENS,
  TOOL_USE_PROMPT_TOKENS,
} from "./count-messages-tokens.js";
import { MAX_IMAGE_TOKENS, PDF_PAGE_TOKENS } from "./estimate-media-tokens.js";

const base = {
  model: "anthropic/claude-sonnet-4.5",
  messages: [{ role: "user", content: "What is in the file?" }],
};

const systemPrompt =
  "You are a coding agent. Follow the repository's conventions, run the tests before finishing, and " +
  "explain every change you make in one short sentence.";

const tools = [
  {
    name: "read_file",
    description: "Read a file from the workspace and return its contents with line numbers.",
    input_schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace root" },
        offset: { type: "integer", description: "First line to read" },
      },
      required: ["path"],
    },
  },
];

function count(extra: Record<string, unknown>): number {
  return countMessagesTokens({ ...base, ...extra }).input_tokens;
}

function createPng(width: number, height: number): string {
  return createPngHeader(width, height).toString("base64");
}

test("max_tokens is optional; the count is positive for a bare conversation", () => {
  const result = countMessagesTokens(base);
  assert.deepEqual(Object.keys(result), ["input_tokens"]);
  assert.ok(Number.isInteger(result.input_tokens) && result.input_tokens > 0);
});

test("the system prompt is counted", () => {
  const added = count({ system: systemPrompt }) - count({});
  assert.ok(added >= estimateTextTokens(systemPrompt), `system added ${added}`);
  const asBlocks = count({
    system: [{ type: "text", text: systemPrompt, cache_control: { type: "ephemeral" } }],
  });
  assert.equal(asBlocks, count({ system: systemPrompt }));
});

test("tools are counted: their schemas plus the provider's tool-use system prompt", () => {
  const added = count({ tools }) - count({});
  const schemaTokens = estimateTextTokens(JSON.stringify(tools[0].input_schema));
  assert.ok(added >= TOOL_USE_PROMPT_TOKENS + schemaTokens, `tools added ${added}`);
  assert.equal(
    count({ tools }) - count({ tools, tool_choice: { type: "any" } }),
    TOOL_USE_PROMPT_TOKENS - FORCED_TOOL_USE_PROMPT_TOKENS,
  );
});

test("images and documents are counted by size and pages", () => {
  const imageTurn = (source: unknown) => ({
    messages: [
      {
        role: "user",
        content: [
          { type: "image", source },
          { type: "text", text: "What is in the file?" },
        ],
      },
    ],
  });
  const small = count(imageTurn({ type: "base64", media_type: "image/png", data: createPng(300, 200) }));
  assert.equal(small - count({}), Math.ceil((300 * 200) / 750));
  const byUrl = count(imageTurn({ type: "url", url: "https://example.com/photo.jpg" }));
  assert.equal(byUrl - count({}), MAX_IMAGE_TOKENS);

  const pdf = Buffer.from(
    "%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>\n" +
      "2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>\n%%EOF",
  ).toString("base64");
  const withPdf = count({
    messages: [
      {
        role: "user",
        content: [
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } },
          { type: "text", text: "What is in the file?" },
        ],
      },
    ],
  });
  assert.equal(withPdf - count({}), 2 * PDF_PAGE_TOKENS);
});

test("a count_tokens body is validated like a messages body", () => {
  assert.throws(
    () => countMessagesTokens({ ...base, temperature: 3 }),
    (error: unknown) =>
      error instanceof GatewayError && error.code === "invalid_request" && error.param === "temperature",
  );
  assert.throws(
    () => countMessagesTokens({ ...base, response_format: { type: "json_object" } }),
    (error: unknown) => error instanceof GatewayError && error.param === "response_format",
  );
  assert.throws(
    () => countMessagesTokens({ model: "a/b" }),
    (error: unknown) => error instanceof GatewayError && error.param === "messages",
  );
});

test("any body is counted quickly: megabytes of one word, of one letter, of a sequence", () => {
  const word = "y".repeat(9_000_000);
  const sequence = Array.from({ length: 2_000_000 }, (_, index) => "ACGT"[(index * 7) % 4]).join("");
  for (const text of [word, sequence]) {
    const started = performance.now();
    const counted = count({ messages: [{ role: "user", content: text }] });
    const elapsed = performance.now() - started;
    // The quadratic merge took ~2.7 s for 80 KB of one letter; 200 KB took 14 s through HTTP.
    assert.ok(elapsed < 1_000, `${elapsed.toFixed(0)} ms for ${text.length} characters`);
    assert.ok(counted > text.length / 100, `${counted} tokens`);
  }
});
