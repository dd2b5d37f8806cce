import assert from "node:assert/strict";
import { test } from "node:test";
import { readWebFetchArguments, WEB_FETCH_TOOL_DEFINITION } from "./web-fetch-tool-definition.js";

test("the model sees a web_fetch function with one required url argument", () => {
  assert.equal(WEB_FETCH_TOOL_DEFINITION.name, "web_fetch");
  assert.ok((WEB_FETCH_TOOL_DEFINITION.description ?? "").length > 50);
  assert.deepEqual(WEB_FETCH_TOOL_DEFINITION.parameters?.required, ["url"]);
  assert.equal(WEB_FETCH_TOOL_DEFINITION.parameters?.additionalProperties, false);
  assert.deepEqual(Object.keys(WEB_FETCH_TOOL_DEFINITION.parameters?.properties as object), ["url"]);
});

test("the model's arguments are read from JSON text or an object; malformed ones get a message", () => {
  assert.deepEqual(readWebFetchArguments('{"url":" https://example.com/a "}'), {
    ok: true,
    url: "https://example.com/a",
  });
  assert.deepEqual(readWebFetchArguments({ url: "https://example.com/b" }), {
    ok: true,
    url: "https://example.com/b",
  });
  for (const raw of ["{not json", "[]", '{"url":42}', '{"url":""}', "null", '{"href":"https://x.y/"}', 7]) {
    const read = readWebFetchArguments(raw);
    assert.equal(read.ok, false, String(raw));
    assert.match(!read.ok ? read.message : "", /^Invalid arguments: /);
  }
});
