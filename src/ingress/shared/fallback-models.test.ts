import assert from "node:assert/strict";
import { test } from "node:test";
import type { GatewayError } from "../../errors/gateway-error.js";
import { decodeChatRequest } from "../chat-completions/decode-request.js";
import { decodeMessagesRequest } from "../messages/decode-request.js";
import { decodeResponsesRequest } from "../responses/decode-request.js";

const decoders = {
  chat_completions: (extra: Record<string, unknown>) =>
    decodeChatRequest({ model: "a/b", messages: [{ role: "user", content: "hi" }], ...extra }),
  responses: (extra: Record<string, unknown>) =>
    decodeResponsesRequest({ model: "a/b", input: "hi", ...extra }),
  anthropic_messages: (extra: Record<string, unknown>) =>
    decodeMessagesRequest({
      model: "a/b",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      ...extra,
    }),
};

for (const [format, decode] of Object.entries(decoders)) {
  test(`${format}: models beside model is decoded, not forwarded upstream; a bad list names the field`, () => {
    const request = decode({ models: ["c/d", "e/f"] });
    assert.deepEqual(request.models, ["c/d", "e/f"]);
    assert.equal(request.passthrough.models, undefined, "never sent upstream as an unknown field");
    assert.equal(decode({}).models, undefined);
    assert.equal(decode({ models: null }).models, undefined);
    for (const bad of [[], ["x"].concat(Array(8).fill("y/z")), [""], "c/d", [1]]) {
      assert.throws(
        () => decode({ models: bad }),
        (error: GatewayError) => error.code === "invalid_request" && /^models/.test(error.param ?? ""),
        JSON.stringify(bad),
      );
    }
  });
}
