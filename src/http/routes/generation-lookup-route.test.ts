import assert from "node:assert/strict";
import { forEachGatewayMode, TEST_MODEL } from "../../../test/helpers/test-gateway.js";

forEachGatewayMode(
  "generation lookup: an id no generation can have is an unknown id, not a 500",
  async (context) => {
    const lookup = (query: string) =>
      fetch(`${context.url}/api/v1/generation?id=${query}`, {
        headers: { Authorization: `Bearer ${context.apiKey}` },
      });
    // PostgreSQL refuses a NUL in text outright; a 10 KB id is no id either.
    for (const query of ["%00", "a%00b", "%ED%A0%80", "x".repeat(10_000), "id%20with%20spaces"]) {
      const response = await lookup(query);
      assert.equal(response.status, 400, query.slice(0, 20));
      const body = (await response.json()) as { error: { code: string; param: string | null } };
      assert.equal(body.error.code, "invalid_request");
      assert.equal(body.error.param, "id");
    }
    const completion = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    const requestId = completion.response.headers.get("x-request-id")!;
    assert.equal((await lookup(requestId)).status, 200, "a real id is still found");
  },
);
