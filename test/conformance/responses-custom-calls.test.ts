/**
 * Calls of passed-through Responses tool types (Codex's freeform `apply_patch`, a function inside a
 * `namespace` tool) answered by an OpenAI Responses route: the official `openai` SDK sees a
 * `custom_tool_call` item (streamed with its input events) and a `function_call` keeping its
 * `namespace`, through `responses.create` and `responses.stream`; the next turn replays both to the
 * upstream in their own shapes; a Chat caller sees ordinary tool calls with `{"input": <text>}`.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type OpenAI from "openai";
import { type ConformanceGateway, startConformanceGateway } from "../helpers/conformance-gateway.js";
import {
  buildResponse,
  numberEvents,
  type ResponseEvent,
  responsesReply,
} from "../helpers/fake-openai-responses-upstream.js";

let gateway: ConformanceGateway;

before(async () => {
  gateway = await startConformanceGateway();
});

after(async () => {
  await gateway?.close();
});

const PATCH = '*** Begin Patch\n*** Add File: notes.txt\n+quote " and \\ and 😀\n*** End Patch';

const CUSTOM_ITEM = {
  id: "ctc_up1",
  type: "custom_tool_call",
  call_id: "call_p1",
  name: "apply_patch",
  input: PATCH,
};
const NAMESPACED_ITEM = {
  id: "fc_up2",
  type: "function_call",
  status: "completed",
  call_id: "call_s1",
  namespace: "multi_agent_v1",
  name: "spawn_agent",
  arguments: '{"task":"review"}',
};

const TOOLS = [
  { type: "custom", name: "apply_patch", description: "Apply a patch", format: { type: "text" } },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Sub-agents",
    tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object", properties: {} } }],
  },
];

function answerJson() {
  return responsesReply.json(buildResponse({ items: [] }));
}

function completeBody() {
  const body = buildResponse({ items: [] });
  body.output = [CUSTOM_ITEM, NAMESPACED_ITEM];
  return body;
}

/** The stream OpenAI sends: the custom input in three deltas, the namespaced call in one. */
function answerSse() {
  const final = completeBody();
  const inProgress = { ...final, status: "in_progress", output: [], usage: null };
  const pieces = [PATCH.slice(0, 12), PATCH.slice(12, 50), PATCH.slice(50)];
  const events: ResponseEvent[] = [
    { type: "response.created", response: inProgress },
    { type: "response.in_progress", response: inProgress },
    { type: "response.output_item.added", output_index: 0, item: { ...CUSTOM_ITEM, input: "" } },
    ...pieces.map((delta) => ({
      type: "response.custom_tool_call_input.delta",
      output_index: 0,
      item_id: CUSTOM_ITEM.id,
      delta,
    })),
    { type: "response.custom_tool_call_input.done", output_index: 0, item_id: CUSTOM_ITEM.id, input: PATCH },
    { type: "response.output_item.done", output_index: 0, item: CUSTOM_ITEM },
    { type: "response.output_item.added", output_index: 1, item: { ...NAMESPACED_ITEM, arguments: "" } },
    {
      type: "response.function_call_arguments.delta",
      output_index: 1,
      item_id: NAMESPACED_ITEM.id,
      delta: NAMESPACED_ITEM.arguments,
    },
    {
      type: "response.function_call_arguments.done",
      output_index: 1,
      item_id: NAMESPACED_ITEM.id,
      arguments: NAMESPACED_ITEM.arguments,
    },
    { type: "response.output_item.done", output_index: 1, item: NAMESPACED_ITEM },
    { type: "response.completed", response: final },
  ];
  return responsesReply.sse(numberEvents(events));
}

function assertCalls(output: OpenAI.Responses.ResponseOutputItem[]): void {
  assert.deepEqual(
    output.map((item) => item.type),
    ["custom_tool_call", "function_call"],
  );
  const [custom, namespaced] = output;
  assert.ok(custom.type === "custom_tool_call" && namespaced.type === "function_call");
  assert.deepEqual([custom.call_id, custom.name, custom.input], ["call_p1", "apply_patch", PATCH]);
  assert.deepEqual(
    [namespaced.call_id, namespaced.namespace, namespaced.name, namespaced.arguments],
    ["call_s1", "multi_agent_v1", "spawn_agent", '{"task":"review"}'],
  );
}

test("the SDK sees a custom_tool_call and a namespaced function_call: create, create streamed, stream()", async () => {
  const upstream = gateway.upstreams["openai-responses"];
  const params = { model: upstream.model, input: "Patch it", tools: TOOLS, store: false } as const;

  upstream.serve(responsesReply.json(completeBody()));
  const plain = await gateway.openai.responses.create(
    params as OpenAI.Responses.ResponseCreateParamsNonStreaming,
  );
  assertCalls(plain.output);
  assert.deepEqual(
    upstream.requests.at(-1)!.body.tools.map((tool: { type: string }) => tool.type),
    ["custom", "namespace"],
  );

  upstream.serve(answerSse());
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await gateway.openai.responses.create({
    ...params,
    stream: true,
  } as OpenAI.Responses.ResponseCreateParamsStreaming))
    events.push(event);
  const deltas = events.flatMap((event) =>
    event.type === "response.custom_tool_call_input.delta" ? [event.delta] : [],
  );
  assert.equal(deltas.join(""), PATCH);
  const inputDone = events.find((event) => event.type === "response.custom_tool_call_input.done");
  assert.ok(inputDone?.type === "response.custom_tool_call_input.done");
  assert.equal(inputDone.input, PATCH);
  const added = events.find(
    (event) => event.type === "response.output_item.added" && event.output_index === 0,
  );
  assert.ok(added?.type === "response.output_item.added");
  assert.equal(added.item.type, "custom_tool_call");
  const completed = events.at(-1);
  assert.ok(completed?.type === "response.completed");
  assertCalls(completed.response.output);

  upstream.serve(answerSse());
  const final = await gateway.openai.responses
    .stream(params as OpenAI.Responses.ResponseCreateParamsStreaming)
    .finalResponse();
  assertCalls(final.output);
});

test("the next turn replays the custom_tool_call, its output and the namespaced call in their own shapes", async () => {
  const upstream = gateway.upstreams["openai-responses"];
  upstream.serve(responsesReply.json(completeBody()));
  const first = await gateway.openai.responses.create({
    model: upstream.model,
    input: "Patch it",
    tools: TOOLS,
    store: false,
  } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  upstream.serve(answerJson());
  const input = [
    { role: "user", content: "Patch it" },
    ...first.output,
    { type: "custom_tool_call_output", call_id: "call_p1", output: "Done" },
    { type: "function_call_output", call_id: "call_s1", output: "spawned" },
  ];
  await gateway.openai.responses.create({
    model: upstream.model,
    input,
    tools: TOOLS,
    store: false,
  } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  const sent = upstream.requests.at(-1)!.body.input as Array<Record<string, unknown>>;
  assert.deepEqual(
    sent.map((item) => item.type),
    ["message", "custom_tool_call", "function_call", "custom_tool_call_output", "function_call_output"],
  );
  assert.deepEqual([sent[1].call_id, sent[1].name, sent[1].input], ["call_p1", "apply_patch", PATCH]);
  // The gateway's own item id (ctc_<request id>_0) is not sent: no upstream issued it.
  assert.match(String((first.output[0] as { id?: string }).id), /^ctc_/);
  assert.equal(sent[1].id, undefined);
  assert.deepEqual([sent[2].namespace, sent[2].name], ["multi_agent_v1", "spawn_agent"]);
});

test("a Chat caller sees the custom call as a function call with {input} arguments, streamed and not", async () => {
  const upstream = gateway.upstreams["openai-responses"];
  const messages = [{ role: "user" as const, content: "Patch it" }];
  upstream.serve(responsesReply.json(completeBody()));
  const plain = await gateway.openai.chat.completions.create({ model: upstream.model, messages });
  const calls = plain.choices[0].message.tool_calls ?? [];
  assert.equal(plain.choices[0].finish_reason, "tool_calls");
  assert.deepEqual(
    calls.map((call) =>
      call.type === "function" ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : [],
    ),
    [
      ["call_p1", "apply_patch", { input: PATCH }],
      ["call_s1", "spawn_agent", { task: "review" }],
    ],
  );

  upstream.serve(answerSse());
  const stream = await gateway.openai.chat.completions.create({
    model: upstream.model,
    messages,
    stream: true,
  });
  const argumentsByIndex = new Map<number, string>();
  for await (const chunk of stream) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      argumentsByIndex.set(
        call.index,
        (argumentsByIndex.get(call.index) ?? "") + (call.function?.arguments ?? ""),
      );
    }
  }
  assert.deepEqual(JSON.parse(argumentsByIndex.get(0)!), { input: PATCH });
  assert.deepEqual(JSON.parse(argumentsByIndex.get(1)!), { task: "review" });
});
