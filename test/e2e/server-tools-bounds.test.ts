/**
 * The tool loop's bounds and failures through a real gateway (embedded): `max_uses` answers the
 * call past it with a limit result and never reaches the backend; a turn that calls a server tool
 * and one of the caller's own functions runs the server tool, then hands the caller its call; a
 * search backend that fails (HTTP 500, 429) or stalls past its deadline gives the model a result
 * saying so, the answer goes on, the call's event says `failed`, and the failure costs nothing. A
 * malformed web_search option is refused before anything is sent, naming the option.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import {
  checkChatStream,
  checkMessagesStream,
  checkResponsesStream,
} from "../conformance/support/stream-rules.js";
import { parseSseFrames } from "../conformance/support/wire-tap.js";
import { DEFAULT_HITS, type FakeSearchReply, searchReply } from "../helpers/fake-search-backend.js";
import {
  answer,
  assertExchangeCarried,
  callTools,
  modelCallId,
  type ScriptedCall,
  usage,
} from "../helpers/scripted-tool-model.js";
import {
  COMPLETION_MICRO_USD,
  type LoopKind,
  PROMPT_MICRO_USD,
  SEARCH_PRICE_MICRO_USD,
  type ServerToolsGateway,
  startServerToolsGateway,
} from "../helpers/server-tools-gateway.js";
import { readToolEvents } from "../helpers/tool-event-frames.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const ROUND = usage(100, 20);
const ROUND_MICRO_USD = ROUND.input * PROMPT_MICRO_USD + ROUND.output * COMPLETION_MICRO_USD;
/** The backend's deadline: a stalled search fails after it. */
const SEARCH_TIMEOUT_MS = 1_500;

const searchFor = (query: string): ScriptedCall => ({ name: "web_search", input: { query } });
const FRANCE = searchFor("capital of France");
const POPULATION = searchFor("population of Paris");
const CITED = ["Paris ", `([Paris - Wikipedia](${DEFAULT_HITS[0].url}))`, "."];
const WEATHER = { name: "get_weather", input: { city: "Paris" } };
const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const LIMIT_SENTENCE = "Not run: web_search may be used at most 1 times in this request.";

let context: ServerToolsGateway;

before(async () => {
  context = await startServerToolsGateway({ searchTimeoutMs: SEARCH_TIMEOUT_MS });
});

after(async () => {
  await context?.close();
});

async function lastBody(mark: number): Promise<string> {
  const exchanges = context.tap.since(mark);
  assert.equal(exchanges.length, 1);
  return exchanges[0].body;
}

test("max_uses 1: a second search in a later round gets a limit result, the backend is asked once", async () => {
  const upstream = context.upstreams.google;
  const searches = context.search.requests.length;
  upstream.serve(
    callTools("google", [FRANCE], { stream: false, usage: ROUND }),
    callTools("google", [POPULATION], { stream: false, usage: ROUND }),
    answer("google", CITED, { stream: false, usage: ROUND }),
  );
  const message = await context.anthropic.messages.create({
    model: upstream.model,
    max_tokens: 512,
    messages: [{ role: "user", content: "Tell me about Paris." }],
    tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 1 }],
  } as Anthropic.MessageCreateParamsNonStreaming);

  assert.deepEqual(
    context.search.requests.slice(searches).map((request) => request.query.q),
    ["capital of France"],
    "one backend request",
  );
  assert.equal(upstream.calls.length, 3);
  // Round 3 carries both rounds' calls; the second was answered by the limit, not by a search.
  assertExchangeCarried("google", upstream.calls[2], [
    { call: FRANCE, resultIncludes: [DEFAULT_HITS[0].url] },
    {
      call: POPULATION,
      resultIncludes: [LIMIT_SENTENCE],
      resultExcludes: ["Web search results"],
      failed: true,
    },
  ]);
  const content = message.content as Json[];
  assert.deepEqual(
    content.map((block) => block.type),
    ["server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result", "text"],
  );
  assert.deepEqual(content[2].input, POPULATION.input);
  assert.deepEqual(content[3].content, {
    type: "web_search_tool_result_error",
    error_code: "max_uses_exceeded",
  });
  assert.equal(content[4].text, CITED.join(""));
  assert.equal(message.stop_reason, "end_turn");
  const record = await context.lookupGeneration(message.id);
  assert.deepEqual(
    record.tool_costs_micro_usd,
    { web_search: String(SEARCH_PRICE_MICRO_USD) },
    "one search paid",
  );
  assert.equal(record.cost_micro_usd, String(3 * ROUND_MICRO_USD + SEARCH_PRICE_MICRO_USD));
});

test("max_uses 1: two searches in one turn, the second gets a limit result and a failed event", async () => {
  const upstream = context.upstreams.anthropic;
  const searches = context.search.requests.length;
  upstream.serve(
    callTools("anthropic", [FRANCE, POPULATION], { stream: true, usage: ROUND }),
    answer("anthropic", CITED, { stream: true, usage: ROUND }),
  );
  const mark = context.tap.exchanges.length;
  const stream = context.openai.responses.stream({
    model: upstream.model,
    input: "Tell me about Paris.",
    store: false,
    tools: [{ type: "web_search", max_uses: 1, events: true }],
  } as never);
  const response = await stream.finalResponse();
  assert.equal(context.search.requests.length - searches, 1, "one backend request");
  assertExchangeCarried("anthropic", upstream.calls[1], [
    { call: FRANCE, resultIncludes: [DEFAULT_HITS[0].url] },
    { call: POPULATION, resultIncludes: [LIMIT_SENTENCE], failed: true },
  ]);
  const items = response.output as Json[];
  assert.deepEqual(
    items.map((item) => [item.type, item.status]),
    [
      ["web_search_call", "completed"],
      ["web_search_call", "failed"],
      ["message", "completed"],
    ],
  );
  assert.deepEqual(items[1].action, {
    type: "search",
    query: "population of Paris",
    queries: ["population of Paris"],
    sources: [],
  });
  const body = await lastBody(mark);
  checkResponsesStream(parseSseFrames(body));
  const ended = readToolEvents("responses", body).filter((event) => event.phase !== "started");
  assert.deepEqual(
    ended.map((event) => [event.call_id, event.phase, event.error?.code, event.cost_micro_usd]),
    [
      [items[0].id, "completed", undefined, SEARCH_PRICE_MICRO_USD],
      [items[1].id, "failed", "max_uses_exceeded", 0],
    ],
  );
});

test("a server tool and the caller's function in one turn: the search runs, the caller gets its call", async (t) => {
  await t.test("chat, not streamed", async () => {
    const upstream = context.upstreams["openai-compatible"];
    const searches = context.search.requests.length;
    upstream.serve(callTools(upstream.kind, [FRANCE, WEATHER], { stream: false, usage: ROUND }));
    const completion = await context.openai.chat.completions.create({
      model: upstream.model,
      messages: [{ role: "user", content: "Weather in the capital of France?" }],
      tools: [{ type: "function", function: WEATHER_TOOL }],
      plugins: [{ id: "web_search" }],
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const choice = completion.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    assert.deepEqual(
      choice.message.tool_calls?.map((call) =>
        call.type === "function" ? [call.id, call.function.name] : [],
      ),
      [[modelCallId(upstream.kind, 1), "get_weather"]],
      "only the caller's own call is handed back",
    );
    assert.equal(upstream.calls.length, 1, "no second round: the caller has to answer first");
    assert.equal(context.search.requests.length - searches, 1, "the search ran");
    const record = await context.lookupGeneration(completion.id);
    assert.equal(record.cost_micro_usd, String(ROUND_MICRO_USD + SEARCH_PRICE_MICRO_USD));
  });

  await t.test("messages, streamed: the search's blocks come before the caller's tool_use", async () => {
    const upstream = context.upstreams.anthropic;
    upstream.serve(callTools(upstream.kind, [FRANCE, WEATHER], { stream: true, usage: ROUND }));
    const mark = context.tap.exchanges.length;
    const message = await context.anthropic.messages
      .stream({
        model: upstream.model,
        max_tokens: 512,
        messages: [{ role: "user", content: "Weather in the capital of France?" }],
        tools: [
          {
            name: WEATHER_TOOL.name,
            description: WEATHER_TOOL.description,
            input_schema: WEATHER_TOOL.parameters,
          },
          { type: "web_search_20250305", name: "web_search" },
        ],
      } as never)
      .finalMessage();
    assert.equal(message.stop_reason, "tool_use");
    const content = message.content as Json[];
    assert.deepEqual(
      content.map((block) => block.type),
      ["server_tool_use", "web_search_tool_result", "tool_use"],
    );
    assert.equal(content[2].id, modelCallId("anthropic", 1));
    assert.deepEqual(content[2].input, WEATHER.input);
    assert.equal(upstream.calls.length, 1);
    checkMessagesStream(parseSseFrames(await lastBody(mark)));
  });

  await t.test("responses, streamed: the web_search_call item comes before the function_call", async () => {
    const upstream = context.upstreams["openai-responses"];
    upstream.serve(callTools(upstream.kind, [FRANCE, WEATHER], { stream: true, usage: ROUND }));
    const response = await context.openai.responses
      .stream({
        model: upstream.model,
        input: "Weather in the capital of France?",
        store: false,
        tools: [{ type: "function", ...WEATHER_TOOL, strict: false }, { type: "web_search" }],
      } as never)
      .finalResponse();
    const items = response.output as Json[];
    assert.deepEqual(
      items.map((item) => item.type),
      ["web_search_call", "function_call"],
    );
    assert.equal(items[1].call_id, modelCallId("openai-responses", 1));
    assert.equal(items[1].name, "get_weather");
    assert.equal(upstream.calls.length, 1);
  });
});

interface FailureCase {
  name: string;
  reply: FakeSearchReply;
  /** What the model reads instead of results. */
  sentence: string;
  /** The call's error code in its event. */
  code: string;
}

const FAILURES: FailureCase[] = [
  {
    name: "HTTP 500",
    reply: searchReply.status(500, { error: "search error" }),
    sentence: 'The web search for "capital of France" failed: the search service answered HTTP 500.',
    code: "unavailable",
  },
  {
    name: "HTTP 429",
    reply: searchReply.status(429, "Too Many Requests"),
    sentence: "the search service answered HTTP 429 (too many requests)",
    code: "too_many_requests",
  },
  {
    name: "a stalled backend",
    reply: searchReply.hang(),
    sentence: "the search service did not answer in time",
    code: "unavailable",
  },
];

test("a failing or stalled search backend: the model is told, the answer goes on, a failed event, cost 0", async (t) => {
  const recovery = ["I could not search; from memory, it is Paris."];
  await t.test(`chat streamed, ${FAILURES[0].name}`, async () => {
    const upstream = context.upstreams["openai-compatible"];
    const failure = FAILURES[0];
    context.search.enqueue(failure.reply);
    upstream.serve(
      callTools(upstream.kind, [FRANCE], { stream: true, usage: ROUND }),
      answer(upstream.kind, recovery, { stream: true, usage: ROUND }),
    );
    const mark = context.tap.exchanges.length;
    const completion = await context.openai.chat.completions
      .stream({
        model: upstream.model,
        messages: [{ role: "user", content: "Capital of France?" }],
        plugins: [{ id: "web_search", events: true }],
      } as never)
      .finalChatCompletion();
    assert.equal(completion.choices[0].message.content, recovery[0]);
    assert.equal(completion.choices[0].finish_reason, "stop");
    const body = await lastBody(mark);
    checkChatStream(parseSseFrames(body));
    await checkFailure(failure, "chat", body, upstream.kind, completion.id);
  });

  await t.test(`messages streamed, ${FAILURES[1].name}`, async () => {
    const upstream = context.upstreams.anthropic;
    const failure = FAILURES[1];
    context.search.enqueue(failure.reply);
    upstream.serve(
      callTools(upstream.kind, [FRANCE], { stream: true, usage: ROUND }),
      answer(upstream.kind, recovery, { stream: true, usage: ROUND }),
    );
    const mark = context.tap.exchanges.length;
    const message = await context.anthropic.messages
      .stream({
        model: upstream.model,
        max_tokens: 512,
        hi_tool_events: true,
        messages: [{ role: "user", content: "Capital of France?" }],
        tools: [{ type: "web_search_20250305", name: "web_search" }],
      } as never)
      .finalMessage();
    const content = message.content as Json[];
    assert.deepEqual(content[1].content, {
      type: "web_search_tool_result_error",
      error_code: "too_many_requests",
    });
    assert.equal(content.at(-1).text, recovery[0]);
    assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 0 });
    const body = await lastBody(mark);
    checkMessagesStream(parseSseFrames(body));
    await checkFailure(failure, "messages", body, upstream.kind, message.id);
  });

  await t.test(`responses streamed, ${FAILURES[2].name}`, async () => {
    const upstream = context.upstreams.google;
    const failure = FAILURES[2];
    context.search.enqueue(failure.reply);
    upstream.serve(
      callTools(upstream.kind, [FRANCE], { stream: true, usage: ROUND }),
      answer(upstream.kind, recovery, { stream: true, usage: ROUND }),
    );
    const mark = context.tap.exchanges.length;
    const response = await context.openai.responses
      .stream({
        model: upstream.model,
        input: "Capital of France?",
        store: false,
        tools: [{ type: "web_search", events: true }],
      } as never)
      .finalResponse();
    const items = response.output as Json[];
    assert.deepEqual(
      items.map((item) => [item.type, item.status]),
      [
        ["web_search_call", "failed"],
        ["message", "completed"],
      ],
    );
    assert.equal(response.output_text, recovery[0]);
    const body = await lastBody(mark);
    checkResponsesStream(parseSseFrames(body));
    const ended = await checkFailure(failure, "responses", body, upstream.kind, response.id);
    assert.ok((ended.duration_ms ?? 0) >= SEARCH_TIMEOUT_MS - 50, "the call waited for its deadline");
    // The stalled request was abandoned, not left open.
    await context.search.waitForNoOpenReplies();
  });
});

async function checkFailure(
  failure: FailureCase,
  format: "chat" | "responses" | "messages",
  body: string,
  kind: LoopKind,
  id: string,
) {
  const upstream = context.upstreams[kind];
  assert.equal(upstream.calls.length, 2, "the answer went on");
  assertExchangeCarried(kind, upstream.calls[1], [
    {
      call: FRANCE,
      resultIncludes: [failure.sentence],
      resultExcludes: ["SEARXNG", "127.0.0.1"],
      failed: true,
    },
  ]);
  const events = readToolEvents(format, body);
  assert.deepEqual(
    events.map((event) => event.phase),
    ["started", "failed"],
  );
  const ended = events[1];
  assert.equal(ended.error?.code, failure.code);
  assert.equal(ended.cost_micro_usd, 0, "a failed call costs nothing");
  assert.equal(ended.output, undefined);
  const record = await context.lookupGeneration(id);
  assert.deepEqual(record.tool_costs_micro_usd, {});
  assert.equal(record.cost_micro_usd, String(2 * ROUND_MICRO_USD));
  return ended;
}

test("a malformed web_search option is refused before anything is sent, naming it in each format", async () => {
  const account = await context.createAccount();
  const model = context.upstreams["openai-compatible"].model;
  const france = { type: "approximate", country: "France" };
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${context.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, ...body }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const searches = context.search.requests.length;
  context.upstreams["openai-compatible"].serve();

  const chat = await post("/api/v1/chat/completions", {
    messages: [{ role: "user", content: "hi" }],
    web_search_options: { user_location: { type: "approximate", approximate: { country: "France" } } },
  });
  assert.equal(chat.status, 400, JSON.stringify(chat.body));
  assert.equal(chat.body.error.code, "invalid_request");
  assert.equal(chat.body.error.param, "web_search_options.user_location.approximate.country");

  const responses = await post("/api/v1/responses", {
    input: "hi",
    tools: [{ type: "web_search", user_location: france }],
  });
  assert.equal(responses.status, 400, JSON.stringify(responses.body));
  assert.equal(responses.body.error.param, "tools[0].user_location.country");

  const messages = await post("/api/v1/messages", {
    max_tokens: 64,
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "web_search_20250305", name: "web_search", user_location: france }],
  });
  assert.equal(messages.status, 400, JSON.stringify(messages.body));
  assert.equal(messages.body.error.code, "invalid_request");
  assert.match(messages.body.error.message, /^tools\[0\]\.user_location\.country: /);

  for (const error of [chat.body.error, responses.body.error, messages.body.error]) {
    assert.match(error.message, /country/);
  }
  assert.equal(context.upstreams["openai-compatible"].calls.length, 0, "nothing sent upstream");
  assert.equal(context.search.requests.length, searches, "nothing searched");
});
