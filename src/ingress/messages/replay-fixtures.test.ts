/**
 * Decodes the recorded Anthropic Messages traffic in `test/fixtures/recorded/anthropic/messages/`:
 * every recorded request body, and every recorded answer sent back as the assistant turn of a
 * follow-up request — the non-streamed `*.response.json` bodies as they are, the `*.sse` streams as
 * the official SDK assembles them. Real traffic carries shapes hand-written tests miss (null
 * server-tool options, citations, server-tool transcripts).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { countMessagesTokens } from "./count-messages-tokens.js";
import { decodeMessagesRequest } from "./decode-request.js";

const fixtureDir = recordedPath("anthropic", "messages");
const fixtureFiles = readdirSync(fixtureDir).sort();

function readJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(fixtureDir, name), "utf8"));
}

/** The request body recorded next to a response file, or undefined. */
function findRequest(responseFile: string): Record<string, unknown> | undefined {
  const requestFile = responseFile.replace(/\.response\.(json|sse)$/, ".request.json");
  return fixtureFiles.includes(requestFile) ? readJson(requestFile) : undefined;
}

test("every recorded request decodes; the one without max_tokens is refused naming it", () => {
  const requests = fixtureFiles.filter((name) => name.endsWith(".request.json"));
  assert.ok(requests.length > 0);
  for (const name of requests) {
    const body = readJson(name);
    // count_tokens takes any of them: max_tokens is optional there.
    assert.ok(countMessagesTokens(body).input_tokens > 0, name);
    if (body.max_tokens === undefined) {
      assert.throws(
        () => decodeMessagesRequest(body),
        (error: unknown) => error instanceof GatewayError && error.param === "max_tokens",
        name,
      );
      continue;
    }
    const request = decodeMessagesRequest(body);
    assert.equal(request.model, body.model, name);
    assert.equal(request.maxOutputTokens, body.max_tokens, name);
  }
});

test("recorded multi-turn requests keep their structure", () => {
  const parallel = decodeMessagesRequest(readJson("parallel-tool-use-roundtrip.2.request.json"));
  assert.deepEqual(
    parallel.messages.map((message) => `${message.role}:${message.content.length}`),
    ["user:1", "assistant:5", "tool:4"],
    "one tool message holding the round's four results",
  );
  assert.equal(parallel.system.length, 1);

  const thinking = decodeMessagesRequest(readJson("thinking-tool-use-roundtrip.2.request.json"));
  const [reasoning, , call] = thinking.messages[1].content;
  assert.ok(reasoning.type === "reasoning" && reasoning.providerState?.providerKind === "anthropic");
  assert.match(reasoning.providerState.signature ?? "", /^EqEE/);
  assert.ok(call.type === "tool-call");
  assert.equal(call.arguments, "{}");
  assert.deepEqual(thinking.reasoning, { enabled: true, budgetTokens: 3000 });

  const search = decodeMessagesRequest(readJson("stream-thinking-web-search-citations.request.json"));
  assert.deepEqual(search.tools, []);
  assert.deepEqual(search.serverTools, [
    { id: "web_search", maxUses: 1000, events: false, param: "tools[0]" },
  ]);

  const cached = decodeMessagesRequest(readJson("prompt-cache.1.request.json"));
  assert.deepEqual(cached.passthrough, { cache_control: { ttl: "5m", type: "ephemeral" } });
});

/** A follow-up request whose history ends with `content` as the assistant turn. */
function decodeFollowUp(request: Record<string, unknown>, content: unknown) {
  const messages = request.messages as unknown[];
  return decodeMessagesRequest({
    ...request,
    messages: [...messages, { role: "assistant", content }, { role: "user", content: "Thanks, go on." }],
  });
}

test("recorded non-streamed answers decode when sent back as the assistant turn", () => {
  const responses = fixtureFiles.filter(
    (name) => name.endsWith(".response.json") && readJson(name).type === "message" && findRequest(name),
  );
  assert.ok(responses.length > 0);
  for (const name of responses) {
    const response = readJson(name);
    const decoded = decodeFollowUp(findRequest(name)!, response.content);
    const turn = decoded.messages[decoded.messages.length - 2];
    assert.equal(turn.role, "assistant", name);
    assert.ok(turn.content.length > 0, name);
  }
});

test("recorded streams, assembled by the official SDK, decode when sent back as the assistant turn", async () => {
  const streams = fixtureFiles.filter((name) => name.endsWith(".sse") && findRequest(name));
  assert.ok(streams.length > 0);
  for (const name of streams) {
    const sse = readFileSync(join(fixtureDir, name), "utf8");
    const client = new Anthropic({
      apiKey: "x",
      baseURL: "http://recording.test",
      maxRetries: 0,
      fetch: async () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
    });
    const request = findRequest(name)!;
    const message = await client.messages
      .stream({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .finalMessage();
    const decoded = decodeFollowUp(request, JSON.parse(JSON.stringify(message.content)));
    const turn = decoded.messages[decoded.messages.length - 2];
    assert.equal(turn.role, "assistant", name);
    const kinds = new Set(turn.content.map((part) => part.type));
    // Thinking (plain or redacted) comes back as reasoning with its native state; server-tool
    // transcript blocks are dropped; the text stays.
    if (message.content.some((block) => block.type === "thinking" || block.type === "redacted_thinking")) {
      assert.ok(kinds.has("reasoning"), name);
      for (const part of turn.content) {
        if (part.type === "reasoning") assert.equal(part.providerState?.providerKind, "anthropic", name);
      }
    }
    assert.ok(kinds.has("text"), name);
  }
});
