import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../errors/gateway-error.js";
import { readClientEvent } from "./read-client-event.js";

const read = (text: string) => readClientEvent(Buffer.from(text));

test("response.create: the socket's own fields are read off; the rest is the Responses body", async () => {
  const event = await read(
    JSON.stringify({
      type: "response.create",
      stream_id: "agent_1.a-b",
      generate: false,
      previous_response_id: "resp_abc",
      stream: true,
      model: "m",
      input: [{ role: "user", content: "hi" }],
      store: false,
      client_metadata: { thread_id: "t" },
    }),
  );
  assert.deepEqual(event, {
    type: "response.create",
    streamId: "agent_1.a-b",
    generate: false,
    previousResponseId: "resp_abc",
    fields: {
      model: "m",
      input: [{ role: "user", content: "hi" }],
      store: false,
      client_metadata: { thread_id: "t" },
    },
  });
  const plain = await read('{"type":"response.create","model":"m","previous_response_id":null}');
  assert.deepEqual(plain, {
    type: "response.create",
    streamId: undefined,
    generate: true,
    previousResponseId: undefined,
    fields: { model: "m" },
  });
});

test("response.processed asks nothing and is ignored", async () => {
  assert.deepEqual(await read('{"type":"response.processed","response_id":"resp_1"}'), {
    type: "ignored",
  });
});

test("every other message is invalid_request naming what is wrong", async () => {
  const cases: Array<[string, string | null, RegExp]> = [
    ["not json", null, /not valid JSON/],
    ["[1,2]", null, /JSON object with a `type`/],
    ['"response.create"', null, /JSON object/],
    ['{"model":"m"}', "type", /string `type`/],
    ['{"type":"response.append","input":[]}', "type", /Unsupported client event type "response.append"/],
    ['{"type":"response.create","stream_id":"has space"}', "stream_id", /stream_id/],
    [`{"type":"response.create","stream_id":"${"s".repeat(257)}"}`, "stream_id", /256/],
    ['{"type":"response.create","generate":"no"}', "generate", /boolean/],
    ['{"type":"response.create","previous_response_id":7}', "previous_response_id", /response id/],
    [`{"type":"response.create","input":${"[".repeat(200)}${"]".repeat(200)}}`, "input", /nested more than/],
  ];
  for (const [text, param, message] of cases) {
    await assert.rejects(
      read(text),
      (error: unknown) =>
        error instanceof GatewayError &&
        error.code === "invalid_request" &&
        (param === null ? error.param === null : (error.param ?? "").startsWith(param)) &&
        message.test(error.message),
      text.slice(0, 60),
    );
  }
});
