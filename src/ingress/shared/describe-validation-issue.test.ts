import assert from "node:assert/strict";
import { test } from "node:test";
import { formatParam } from "./describe-validation-issue.js";

test("paths format as OpenAI-style parameter names", () => {
  assert.equal(
    formatParam(["messages", 0, "content", 2, "image_url", "url"]),
    "messages[0].content[2].image_url.url",
  );
  assert.equal(formatParam(["temperature"]), "temperature");
  assert.equal(formatParam([]), null);
});
