/**
 * What a newer client adds beyond the gateway's vocabulary, through every provider kind: top-level
 * Messages blocks and Responses input items of unknown types reach an upstream of their own wire
 * family verbatim, in their places, and are left out elsewhere with the drop report (header and
 * generation record); strict mode refuses the loss naming the field, before any upstream call.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ConformanceGateway,
  PROVIDER_KINDS,
  startConformanceGateway,
} from "../helpers/conformance-gateway.js";
import { scriptAnswer } from "../helpers/scenario-scripts.js";

let gateway: ConformanceGateway;

before(async () => {
  gateway = await startConformanceGateway();
});

after(async () => {
  await gateway?.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/api/v1/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${gateway.apiKey}`,
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function recordedDrops(response: Response): Promise<unknown> {
  const lookup = await fetch(`${gateway.url}/api/v1/generation?id=${response.headers.get("x-request-id")}`, {
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  });
  return ((await lookup.json()) as { data: { dropped: unknown } }).data.dropped;
}

const SEARCH_RESULT = {
  type: "search_result",
  source: "https://docs.test/paris",
  title: "Paris",
  content: [{ type: "text", text: "Paris is the capital of France." }],
  citations: { enabled: true },
};

function messagesWithSearchResult(model: string, stream: boolean) {
  return {
    model,
    max_tokens: 256,
    stream,
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "Use this:" }, SEARCH_RESULT, { type: "text", text: "Capital?" }],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Noted." },
          { type: "mystery_block_2027", note: 1 },
        ],
      },
      { role: "user", content: [SEARCH_RESULT] },
    ],
  };
}

test("Messages blocks of unknown types: verbatim in place to Anthropic, left out and reported elsewhere, streamed and not", async () => {
  for (const stream of [false, true]) {
    for (const kind of PROVIDER_KINDS) {
      const upstream = gateway.upstreams[kind];
      upstream.serve(scriptAnswer(kind, "text", { stream }));
      const before = upstream.requests.length;
      const response = await post("messages", messagesWithSearchResult(upstream.model, stream));
      assert.equal(response.status, 200, `${kind}: ${await response.clone().text()}`);
      await response.text();
      const sent = upstream.requests[before].body;
      const dropped = response.headers.get("x-hi-dropped");
      if (kind === "anthropic") {
        assert.equal(dropped, null);
        assert.deepEqual(sent.messages[0].content, [
          { type: "text", text: "Use this:" },
          SEARCH_RESULT,
          { type: "text", text: "Capital?" },
        ]);
        assert.deepEqual(sent.messages[1].content, [
          { type: "text", text: "Noted." },
          { type: "mystery_block_2027", note: 1 },
        ]);
        assert.deepEqual(sent.messages[2].content, [SEARCH_RESULT]);
      } else {
        assert.equal(
          dropped,
          "messages[0].content[1](search_result), messages[1].content[1](mystery_block_2027), messages[2].content[0](search_result)",
          kind,
        );
        const text = JSON.stringify(sent);
        assert.equal(text.includes("search_result") || text.includes("docs.test"), false, kind);
        assert.equal(text.includes("Capital?"), true, `${kind}: the rest of the turn goes`);
        assert.deepEqual(await recordedDrops(response), dropped.split(", "));
      }
    }
  }
});

test("strict mode refuses a Messages block a route would lose, naming it, before any upstream call", async () => {
  const chat = gateway.upstreams["openai-chat"];
  const before = chat.requests.length;
  const response = await post("messages", {
    ...messagesWithSearchResult(chat.model, false),
    hi_strict: true,
  });
  assert.equal(response.status, 400);
  // The Messages envelope has no param: the message names the field.
  const refusal = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(refusal.error.code, "invalid_request");
  assert.match(refusal.error.message, /messages\[0\]\.content\[1\]\(search_result\)/);
  assert.equal(chat.requests.length, before, "nothing was sent");
});

function responsesWithUnknownItems(model: string, stream: boolean) {
  return {
    model,
    stream,
    store: false,
    tools: [{ type: "custom", name: "apply_patch", description: "Apply a patch" }],
    input: [
      { role: "user", content: "Patch README" },
      { type: "custom_tool_call", call_id: "call_p1", name: "apply_patch", input: "*** Begin Patch" },
      { type: "custom_tool_call_output", call_id: "call_p1", output: "Done" },
      { role: "user", content: "Thanks; now say hello" },
    ],
  };
}

test("Responses input items of unknown types: verbatim in place to OpenAI Responses, left out and reported elsewhere", async () => {
  for (const stream of [false, true]) {
    for (const kind of PROVIDER_KINDS) {
      const upstream = gateway.upstreams[kind];
      upstream.serve(scriptAnswer(kind, "text", { stream }));
      const before = upstream.requests.length;
      const response = await post("responses", responsesWithUnknownItems(upstream.model, stream));
      assert.equal(response.status, 200, `${kind}: ${await response.clone().text()}`);
      await response.text();
      const sent = upstream.requests[before].body;
      const dropped = response.headers.get("x-hi-dropped");
      if (kind === "openai-responses") {
        assert.equal(dropped, null);
        assert.deepEqual(
          sent.input.map((item: { type: string }) => item.type),
          ["message", "custom_tool_call", "custom_tool_call_output", "message"],
        );
        assert.equal(sent.input[1].input, "*** Begin Patch");
      } else {
        assert.equal(
          dropped,
          "tools[0](custom), input[1](custom_tool_call), input[2](custom_tool_call_output)",
          kind,
        );
        assert.equal(JSON.stringify(sent).includes("Begin Patch"), false, kind);
        assert.deepEqual(await recordedDrops(response), dropped.split(", "));
      }
    }
  }
  const anthropic = gateway.upstreams.anthropic;
  const before = anthropic.requests.length;
  const strict = await post("responses", responsesWithUnknownItems(anthropic.model, false), {
    "X-Hi-Strict": "true",
  });
  assert.equal(strict.status, 400);
  const refusal = (await strict.json()) as { error: { param: string; message: string } };
  assert.equal(refusal.error.param, "tools[0]");
  assert.match(refusal.error.message, /input\[1\]\(custom_tool_call\)/);
  assert.equal(anthropic.requests.length, before);
});

test("unknown fields of a Chat function tool's function object: inside it on Chat routes, reported dropped elsewhere", async () => {
  for (const kind of PROVIDER_KINDS) {
    const upstream = gateway.upstreams[kind];
    upstream.serve(scriptAnswer(kind, "text", { stream: false }));
    const before = upstream.requests.length;
    const response = await post("chat/completions", {
      model: upstream.model,
      messages: [{ role: "user", content: "Hi" }],
      tools: [
        {
          type: "function",
          function: {
            name: "lookup",
            parameters: { type: "object" },
            input_examples: [{ q: "a" }],
            defer_loading: true,
          },
        },
      ],
    });
    assert.equal(response.status, 200, `${kind}: ${await response.clone().text()}`);
    const sent = upstream.requests[before].body;
    const dropped = response.headers.get("x-hi-dropped");
    if (kind === "openai-chat" || kind === "openai-compatible") {
      assert.equal(dropped, null, kind);
      assert.deepEqual(sent.tools[0].function.input_examples, [{ q: "a" }], kind);
      assert.equal(sent.tools[0].function.defer_loading, true, kind);
    } else {
      // The header's list is comma-separated, so a comma inside one entry is percent-encoded.
      assert.equal(dropped, "tools[0].function.{input_examples%2Cdefer_loading}", kind);
      assert.equal(JSON.stringify(sent).includes("input_examples"), false, kind);
      assert.deepEqual(await recordedDrops(response), ["tools[0].function.{input_examples,defer_loading}"]);
    }
  }
  const google = gateway.upstreams.google;
  const strict = await post(
    "chat/completions",
    {
      model: google.model,
      messages: [{ role: "user", content: "Hi" }],
      tools: [{ type: "function", function: { name: "lookup", input_examples: [] } }],
    },
    { "X-Hi-Strict": "true" },
  );
  assert.equal(strict.status, 400);
  assert.equal(
    ((await strict.json()) as { error: { param: string } }).error.param,
    "tools[0].function.input_examples",
  );
});

test("a tool_choice of another form goes as it came to its own wire family, and is left out and reported elsewhere", async () => {
  const cases = [
    {
      path: "messages",
      family: "anthropic",
      kind: "tool",
      choice: { type: "tool", name: "bash" },
      body: (model: string) => ({
        model,
        max_tokens: 64,
        messages: [{ role: "user", content: "Hi" }],
        tools: [
          { name: "lookup", input_schema: { type: "object" } },
          { type: "bash_20250124", name: "bash" },
        ],
      }),
    },
    {
      path: "responses",
      family: "openai-responses",
      kind: "allowed_tools",
      choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "lookup" }] },
      body: (model: string) => ({
        model,
        input: "Hi",
        tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
      }),
    },
    {
      path: "chat/completions",
      family: "openai-chat",
      kind: "custom",
      choice: { type: "custom", custom: { name: "patch" } },
      body: (model: string) => ({
        model,
        messages: [{ role: "user", content: "Hi" }],
        tools: [{ type: "custom", custom: { name: "patch" } }],
      }),
    },
  ] as const;
  for (const { path, family, kind: choiceKind, choice, body } of cases) {
    for (const kind of PROVIDER_KINDS) {
      const upstream = gateway.upstreams[kind];
      upstream.serve(scriptAnswer(kind, "text", { stream: false }));
      const before = upstream.requests.length;
      const response = await post(path, { ...body(upstream.model), tool_choice: choice });
      const label = `${path} → ${kind}`;
      assert.equal(response.status, 200, `${label}: ${await response.clone().text()}`);
      const sent = upstream.requests[before].body;
      const dropped = response.headers.get("x-hi-dropped") ?? "";
      const ownFamily = kind === family || (family === "openai-chat" && kind === "openai-compatible");
      if (ownFamily) {
        assert.deepEqual(sent.tool_choice, choice, label);
        assert.equal(dropped.includes("tool_choice"), false, label);
      } else {
        assert.equal(
          JSON.stringify(sent).includes(choiceKind === "tool" ? "bash" : choiceKind),
          false,
          label,
        );
        assert.ok(
          dropped
            .split(",")
            .map((entry) => entry.trim())
            .includes(`tool_choice(${choiceKind})`),
          `${label}: ${dropped}`,
        );
        assert.ok(
          ((await recordedDrops(response)) as string[]).includes(`tool_choice(${choiceKind})`),
          label,
        );
      }
      if (path === "responses") {
        const echoed = ((await response.json()) as { tool_choice: unknown }).tool_choice;
        assert.deepEqual(echoed, choice, `${label}: the response echoes the choice`);
      }
    }
  }
  const google = gateway.upstreams.google;
  const before = google.requests.length;
  const strict = await post(
    "responses",
    {
      model: google.model,
      input: "Hi",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
      tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "lookup" }] },
    },
    { "X-Hi-Strict": "true" },
  );
  assert.equal(strict.status, 400);
  assert.equal(((await strict.json()) as { error: { param: string } }).error.param, "tool_choice");
  assert.equal(google.requests.length, before, "nothing sent in strict mode");
});
