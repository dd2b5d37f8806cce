/**
 * What coding agents and agent SDKs send, at their default settings, through every provider kind:
 * the rules of docs/clients.md. Claude Code's and Codex's request shapes (fields, block and tool
 * types newer than the gateway's vocabulary) are accepted, reach an upstream of their own wire
 * family verbatim and are left out elsewhere with the drop report; strict mode refuses any loss;
 * the Anthropic SDK's tool runner falls back from message threads to the full history.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { type ConformanceGateway, startConformanceGateway } from "../helpers/conformance-gateway.js";
import { renderAnswer, scriptAnswer, WEATHER_TOOL } from "../helpers/scenario-scripts.js";

let gateway: ConformanceGateway;

before(async () => {
  gateway = await startConformanceGateway();
});

after(async () => {
  await gateway?.close();
});

test("Anthropic SDK toolRunner() at its defaults: the thread is refused as unsupported and the full history goes instead", async () => {
  const upstream = gateway.upstreams.anthropic;
  upstream.serve(
    scriptAnswer("anthropic", "tool-call", { stream: false }),
    renderAnswer(
      "anthropic",
      {
        text: ["It is 21 °C in Paris."],
        finish: "stop",
        usage: { input: 30, cached: 0, output: 9, reasoning: 0 },
      },
      { stream: false },
    ),
  );
  const before = upstream.requests.length;
  const calls: unknown[] = [];
  // The bodies the SDK sent, to see it try a thread first.
  const sentByClient: Array<Record<string, unknown>> = [];
  const client = new Anthropic({
    apiKey: gateway.apiKey,
    baseURL: `${gateway.url}/api`,
    maxRetries: 0,
    fetch: (url, init) => {
      sentByClient.push(JSON.parse(String(init?.body)));
      return fetch(url, init);
    },
  });
  const runner = client.beta.messages.toolRunner({
    model: upstream.model,
    max_tokens: 256,
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    tools: [
      betaTool({
        name: WEATHER_TOOL.name,
        description: WEATHER_TOOL.description,
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        run: (input) => {
          calls.push(input);
          return "21 °C, sunny";
        },
      }),
    ],
  });
  const final = await runner.runUntilDone();
  assert.deepEqual(calls, [{ city: "Paris", unit: "celsius" }]);
  assert.deepEqual(sentByClient[0].thread, { type: "create" }, "the SDK asks for a thread by default");
  assert.ok(
    sentByClient.slice(1).every((body) => body.thread === undefined),
    "refused, it sends every later turn without one",
  );
  const text = final.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  assert.equal(text, "It is 21 °C in Paris.");
  // The second upstream call carries the whole conversation: the question, the call and its result.
  const sent = upstream.requests.slice(before);
  assert.equal(sent.length, 2);
  assert.equal(sent[0].body.thread, undefined, "no thread field reaches the upstream");
  const history = sent[1].body.messages as Array<{ role: string; content: unknown }>;
  assert.deepEqual(
    history.map((message) => message.role),
    ["user", "assistant", "user"],
  );
});

test("a request with thread is refused with the details Anthropic's SDK reads as threads unsupported", async () => {
  const response = await fetch(`${gateway.url}/api/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": gateway.apiKey },
    body: JSON.stringify({
      model: gateway.upstreams.anthropic.model,
      max_tokens: 16,
      thread: { type: "continue", previous_message_id: "msg_1" },
      messages: [{ role: "user", content: "Hi" }],
    }),
  });
  assert.equal(response.status, 400);
  const body = (await response.json()) as { type: string; error: Record<string, unknown> };
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "invalid_request_error");
  assert.equal(body.error.code, "invalid_request");
  assert.deepEqual(body.error.details, { error_code: "thread_unsupported_request", unsupported: ["thread"] });
});
