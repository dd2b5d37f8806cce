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
import type OpenAI from "openai";
import {
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
} from "../helpers/conformance-gateway.js";
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

/** Claude Code's `metadata.user_id`: a JSON string of about 150 characters. */
const CLAUDE_CODE_USER_ID = JSON.stringify({
  device_id: "5f1c0e9a7b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e",
  account_uuid: "",
  session_id: "0b8e3c5e-1d7c-4e0f-9a56-3f1e2d4c5b6a",
});

/** What Claude Code 2.1 sends beyond the spec's vocabulary, in one turn without a tool loop. */
function claudeCodeTurn(model: string, stream: boolean) {
  return {
    model,
    max_tokens: 32_000,
    stream,
    thinking: { type: "adaptive", display: "updates" },
    metadata: { user_id: CLAUDE_CODE_USER_ID },
    system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
    tools: [
      { name: "Read", description: "Read a file", input_schema: { type: "object" }, defer_loading: true },
      { type: "bash_20250124", name: "bash" },
    ],
    messages: [{ role: "user", content: "Say hello" }],
  };
}

/** Claude Code after its ToolSearch tool ran: the result names the tool it loaded. */
function claudeCodeToolSearchResult(model: string) {
  return {
    model,
    max_tokens: 1024,
    tools: [
      { name: "ToolSearch", input_schema: { type: "object" } },
      { name: "Read", input_schema: { type: "object" }, defer_loading: true },
    ],
    messages: [
      { role: "user", content: "Read the README" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [
              { type: "text", text: "Found:" },
              { type: "tool_reference", tool_name: "Read" },
            ],
          },
        ],
      },
    ],
  };
}

async function postMessages(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/api/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": gateway.apiKey,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219,thinking-display-updates-2026-08-18",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function lookUpGeneration(requestId: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.url}/api/v1/generation?id=${requestId}`, {
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

test("Claude Code's turn through every provider kind: 200; Anthropic gets its extras verbatim, the others report them dropped", async () => {
  for (const kind of PROVIDER_KINDS) {
    const upstream = gateway.upstreams[kind];
    upstream.serve(scriptAnswer(kind, "text", { stream: false }));
    const before = upstream.requests.length;
    const response = await postMessages(claudeCodeTurn(upstream.model, false));
    assert.equal(response.status, 200, `${kind}: ${await response.clone().text()}`);
    const sent = upstream.requests[before].body;
    const dropped = response.headers.get("x-hi-dropped");
    if (kind === "anthropic") {
      assert.equal(dropped, null, "nothing is lost on the way to Anthropic");
      assert.equal(sent.thinking.display, "updates");
      assert.equal(sent.tools[0].defer_loading, true);
      assert.deepEqual(sent.tools[1], { type: "bash_20250124", name: "bash" });
      assert.equal(sent.metadata.user_id, CLAUDE_CODE_USER_ID);
    } else {
      assert.equal(dropped, "tools[1](bash_20250124), tools[0].defer_loading, thinking.display", kind);
      assert.equal(
        JSON.stringify(sent).includes("defer_loading"),
        false,
        `${kind}: nothing of it goes upstream`,
      );
    }
    // The end-user id fits OpenAI's 64 characters: hashed, the same on every request.
    const userId = sent.safety_identifier ?? sent.user;
    if (kind === "openai-responses" || kind === "openai-chat") {
      assert.equal(typeof userId, "string", kind);
      assert.ok(userId.length <= 64, `${kind}: ${userId}`);
    }
    const record = await lookUpGeneration(response.headers.get("x-request-id")!);
    assert.equal(record.ingress_format, "anthropic_messages");
    assert.deepEqual(record.dropped, dropped === null ? [] : dropped.split(", "));
  }
});

test("Claude Code's tool_reference blocks reach Anthropic in place and are reported dropped elsewhere, streamed too", async () => {
  for (const kind of PROVIDER_KINDS) {
    const upstream = gateway.upstreams[kind];
    upstream.serve(scriptAnswer(kind, "text", { stream: true }));
    const before = upstream.requests.length;
    const body = claudeCodeToolSearchResult(upstream.model);
    const response = await postMessages(Object.assign(body, { stream: true }));
    assert.equal(response.status, 200, kind);
    await response.text();
    const sent = upstream.requests[before].body;
    if (kind === "anthropic") {
      assert.equal(response.headers.get("x-hi-dropped"), null);
      assert.deepEqual(sent.messages[2].content[0].content, [
        { type: "text", text: "Found:" },
        { type: "tool_reference", tool_name: "Read" },
      ]);
    } else {
      assert.equal(
        response.headers.get("x-hi-dropped"),
        "tools[1].defer_loading, messages[2].content[0].content[1](tool_reference)",
        kind,
      );
      assert.equal(JSON.stringify(sent).includes("tool_reference"), false, kind);
    }
  }
});

/** What Codex 0.171 sends on its first turn (trimmed): a namespace tool, web_search, a custom tool. */
function codexTurn(model: string) {
  return {
    model,
    instructions: "You are Codex.",
    input: [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "Sandbox: read-only" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] },
    ],
    tools: [
      {
        type: "function",
        name: "shell",
        description: "Run a command",
        parameters: { type: "object" },
        strict: false,
      },
      {
        type: "namespace",
        name: "multi_agent_v1",
        description: "Sub-agents",
        tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object" }, strict: false }],
      },
      { type: "web_search", external_web_access: false },
      {
        type: "custom",
        name: "apply_patch",
        format: { type: "grammar", syntax: "lark", definition: "start: /.+/" },
      },
    ],
    tool_choice: "auto",
    parallel_tool_calls: true,
    reasoning: { summary: "auto" },
    store: false,
    stream: true,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "0b8e3c5e-1d7c-4e0f-9a56-3f1e2d4c5b6a",
  };
}

async function postResponses(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/api/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
}

test("Codex's turn on a gateway without a search backend: 200 through a Responses route (its tools verbatim) and through every other kind (drop report)", async () => {
  for (const kind of PROVIDER_KINDS) {
    const upstream = gateway.upstreams[kind];
    upstream.serve(scriptAnswer(kind, "text", { stream: true }));
    const before = upstream.requests.length;
    const response = await postResponses(codexTurn(upstream.model));
    assert.equal(response.status, 200, `${kind}: ${await response.clone().text()}`);
    assert.match(await response.text(), /response\.completed/);
    const sent = upstream.requests[before].body;
    const dropped = response.headers.get("x-hi-dropped");
    if (kind === "openai-responses") {
      assert.deepEqual(
        sent.tools.map((tool: { type: string }) => tool.type),
        ["function", "namespace", "custom"],
      );
      assert.equal(sent.prompt_cache_key, "0b8e3c5e-1d7c-4e0f-9a56-3f1e2d4c5b6a");
      assert.equal(dropped, "tools[2](web_search)");
    } else if (kind === "openai-compatible" || kind === "openai-chat") {
      // The Chat family has prompt_cache_key too: it goes through, the Responses-only tools do not.
      assert.equal(sent.prompt_cache_key, "0b8e3c5e-1d7c-4e0f-9a56-3f1e2d4c5b6a", kind);
      assert.equal(dropped, "tools[1](namespace), tools[3](custom), tools[2](web_search)", kind);
      assert.equal(JSON.stringify(sent).includes("multi_agent_v1"), false, kind);
    } else {
      assert.equal(
        dropped,
        "tools[1](namespace), tools[3](custom), tools[2](web_search), prompt_cache_key",
        kind,
      );
      assert.equal(JSON.stringify(sent).includes("multi_agent_v1"), false, kind);
    }
    const record = await lookUpGeneration(response.headers.get("x-request-id")!);
    assert.deepEqual(record.dropped, dropped!.split(", "));
  }
});

test("strict mode (header or body field) refuses a route that would lose anything, before any upstream call, naming the field", async () => {
  const anthropic = gateway.upstreams.anthropic;
  const before = anthropic.requests.length;
  const byHeader = await postResponses(codexTurn(anthropic.model), { "X-Hi-Strict": "true" });
  assert.equal(byHeader.status, 400);
  const refusal = (await byHeader.json()) as { error: { code: string; param: string; message: string } };
  assert.equal(refusal.error.code, "invalid_request");
  assert.equal(refusal.error.param, "tools[1]");
  assert.match(refusal.error.message, /tools\[1\]\(namespace\)/);
  const byField = await postMessages(
    Object.assign(claudeCodeTurn(gateway.upstreams["openai-chat"].model, false), { hi_strict: true }),
  );
  assert.equal(byField.status, 400);
  assert.equal(((await byField.json()) as { error: { code: string } }).error.code, "invalid_request");
  assert.equal(anthropic.requests.length, before, "nothing was sent");
  // A route that loses nothing serves a strict request.
  anthropic.serve(scriptAnswer("anthropic", "text", { stream: false }));
  const lossless = await postMessages(claudeCodeTurn(anthropic.model, false), { "X-Hi-Strict": "true" });
  assert.equal(lossless.status, 200);
});

test("chat completions carry system_fingerprint (null); response objects carry the penalties", async () => {
  const chat = gateway.upstreams["openai-chat"];
  chat.serve(scriptAnswer("openai-chat", "text", { stream: false }));
  const completion = await gateway.openai.chat.completions.create({
    model: chat.model,
    messages: [{ role: "user", content: "Hi" }],
  });
  assert.equal(completion.system_fingerprint, null);
  const responses = gateway.upstreams.anthropic;
  responses.serve(scriptAnswer("anthropic", "output-cap", { stream: false }));
  const response = await gateway.openai.responses.create({
    model: responses.model,
    input: "Hi",
    frequency_penalty: 0.5,
  } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  const echoed = response as unknown as Record<string, unknown>;
  assert.equal(echoed.frequency_penalty, 0.5);
  assert.equal(echoed.presence_penalty, null);
  assert.equal(response.status, "incomplete");
  assert.equal((response.output[0] as { status: string }).status, "incomplete");
});

test("a server tool listed in tools is left out when nothing can run it; the same tool asked through plugins keeps its refusal", async () => {
  const chat = gateway.upstreams["openai-chat"];
  chat.serve(scriptAnswer("openai-chat", "text", { stream: false }));
  const listed = await fetch(`${gateway.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.apiKey}` },
    body: JSON.stringify({
      model: chat.model,
      messages: [{ role: "user", content: "Hi" }],
      tools: [{ type: "hi:web_search" }],
    }),
  });
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get("x-hi-dropped"), "tools[0](web_search)");
  const asked = await fetch(`${gateway.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.apiKey}` },
    body: JSON.stringify({
      model: chat.model,
      messages: [{ role: "user", content: "Hi" }],
      plugins: [{ id: "web_search" }],
    }),
  });
  assert.equal(asked.status, 400);
  const refusal = (await asked.json()) as { error: { param: string; message: string } };
  assert.equal(refusal.error.param, "plugins[0]");
  assert.match(refusal.error.message, /not configured/);
});
