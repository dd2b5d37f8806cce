import assert from "node:assert/strict";
import { test } from "node:test";
import { createWebSearchToolDefinition, parseWebSearchToolInput } from "./web-search-tool-definition.js";

test("the definition is a function tool named web_search that requires a query", () => {
  const tool = createWebSearchToolDefinition(8);
  assert.equal(tool.name, "web_search");
  const parameters = tool.parameters as {
    required: string[];
    properties: Record<string, { maximum?: number }>;
  };
  assert.deepEqual(parameters.required, ["query"]);
  assert.deepEqual(Object.keys(parameters.properties), [
    "query",
    "count",
    "allowed_domains",
    "blocked_domains",
  ]);
  assert.equal(parameters.properties.count.maximum, 8);
});

test("the model's arguments are read leniently where models are sloppy", () => {
  assert.deepEqual(
    parseWebSearchToolInput(
      '{"query":"rust 2026","count":"3","allowed_domains":"https://doc.rust-lang.org/","extra":1}',
    ),
    { ok: true, input: { query: "rust 2026", count: 3, allowedDomains: ["doc.rust-lang.org"] } },
  );
  assert.deepEqual(
    parseWebSearchToolInput({ query: "q", blocked_domains: ["a.com", "A.com"], count: null }),
    {
      ok: true,
      input: { query: "q", blockedDomains: ["a.com"] },
    },
  );
});

test("arguments that cannot be searched give a message for the model", () => {
  for (const input of [
    "{not json",
    "[]",
    '{"query":""}',
    '{"q":"x"}',
    '{"query":"x","count":0}',
    '{"query":"x","count":2.5}',
    '{"query":"x","allowed_domains":["localhost"]}',
    '{"query":"x","blocked_domains":{}}',
  ]) {
    const parsed = parseWebSearchToolInput(input);
    assert.equal(parsed.ok, false, input);
    assert.ok(!parsed.ok && parsed.message.length > 10);
  }
});
