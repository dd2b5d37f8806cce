/**
 * Server tools through the official `openai` client: a loopback HTTP server decodes each
 * POST /responses with the real decoder and answers with the Responses encoders' output for a
 * scripted tool-loop run (the canonical parts the engine yields), streamed or not. The client's
 * own parsing, stream accumulator and raw iteration are the judges.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalStreamPart,
  CanonicalUsage,
  ResultContent,
  ServerToolCall,
  ServerToolId,
  ServerToolOutput,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponsesEncodeContext } from "./create-response-object.js";
import { decodeResponsesRequest } from "./decode-request.js";
import { encodeResponsesResult } from "./encode-result.js";
import { createItemSeal } from "./item-seal.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";

const itemSeal = createItemSeal(randomBytes(32));

const usage: CanonicalUsage = {
  inputTokens: 900,
  outputTokens: 120,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 40,
};

const FR = "https://example.com/fr";
const WIKI = "https://en.wikipedia.org/wiki/Paris";
/** Starts with a flag (4 UTF-16 units), so offsets counted in code points would be off. */
const ANSWER_HEAD = "🇫🇷 Paris is the capital of France ";
const ANSWER_CITE = "([example.com](https://example.com/fr))";

/** A run scripted as the engine yields it, given whether the caller wants events per tool. */
type Script = (events: (tool: ServerToolId) => boolean) => CanonicalStreamPart[];

function call(
  id: string,
  tool: ServerToolId,
  input: Record<string, unknown>,
  events: boolean,
): ServerToolCall {
  return { id, tool, input, events };
}

function completed(of: ServerToolCall, output: ServerToolOutput): ServerToolResult {
  const { id, tool, input, events } = of;
  return { callId: id, tool, input, status: "completed", output, costMicroUsd: 5000, durationMs: 30, events };
}

function searchOutput(query: string, urls: string[]): ServerToolOutput {
  return {
    kind: "search",
    query,
    sources: urls.map((url) => ({ url, title: `Title of ${url}`, snippet: "…", pageAge: null })),
  };
}

function fetchOutput(url: string): ServerToolOutput {
  return {
    kind: "fetch",
    url,
    finalUrl: url,
    title: "France",
    retrievedAt: "2026-11-26T12:00:00Z",
    contentType: "text/html",
    bytes: 2048,
    text: "# France\nParis is the capital.",
    truncated: false,
  };
}

function cite(url: string, text: string, span: string): UrlCitation {
  const startIndex = text.indexOf(span);
  return { url, title: `Title of ${url}`, startIndex, endIndex: startIndex + span.length, citedText: "…" };
}

/** A text block whose citation follows the delta that completes its span. */
function citedText(id: string, head: string, span: string, tail: string, url: string): CanonicalStreamPart[] {
  return [
    { type: "text-start", id },
    { type: "text-delta", id, delta: head },
    { type: "text-delta", id, delta: span },
    { type: "citation", id, citation: cite(url, head + span + tail, span) },
    { type: "text-delta", id, delta: tail },
    { type: "text-end", id },
  ];
}

const end: CanonicalStreamPart[] = [
  { type: "usage", usage },
  { type: "finish", reason: "stop" },
];

/** Reasoning and text, a search; then a page read; then the cited answer. */
const searchThenFetch: Script = (events) => {
  const search = call("srch_1", "web_search", { query: "capital of france" }, events("web_search"));
  const read = call("read_2", "web_fetch", { url: FR }, events("web_fetch"));
  return [
    { type: "reasoning-start", id: "r1" },
    { type: "reasoning-delta", id: "r1", delta: "Search before answering." },
    { type: "reasoning-end", id: "r1" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Let me check." },
    { type: "text-end", id: "t1" },
    { type: "server-tool-call", call: search },
    { type: "server-tool-result", result: completed(search, searchOutput("capital of france", [FR, WIKI])) },
    { type: "server-tool-call", call: read },
    { type: "server-tool-result", result: completed(read, fetchOutput(FR)) },
    { type: "reasoning-start", id: "r3" },
    { type: "reasoning-delta", id: "r3", delta: "The page confirms it." },
    { type: "reasoning-end", id: "r3" },
    ...citedText("t3", ANSWER_HEAD, ANSWER_CITE, ".", FR),
    ...end,
  ];
};

/** One round with three calls (all calls first, then all results), then an answer citing two sources. */
const threeCallsInOneRound: Script = (events) => {
  const search = call("a", "web_search", { query: "paris population" }, events("web_search"));
  const clock = call("b", "datetime", { timezone: "Europe/Paris" }, events("datetime"));
  const read = call("c", "web_fetch", { url: WIKI }, events("web_fetch"));
  const head = "About 2.1 million people ";
  const span = "([wikipedia.org](https://en.wikipedia.org/wiki/Paris))";
  return [
    { type: "server-tool-call", call: search },
    { type: "server-tool-call", call: clock },
    { type: "server-tool-call", call: read },
    { type: "server-tool-result", result: completed(search, searchOutput("paris population", [WIKI])) },
    {
      type: "server-tool-result",
      result: completed(clock, {
        kind: "datetime",
        utc: "2026-11-26T12:00:00Z",
        timezones: ["Europe/Paris"],
      }),
    },
    { type: "server-tool-result", result: completed(read, fetchOutput(WIKI)) },
    ...citedText("t2", head, span, " live in Paris.", WIKI),
    ...end,
  ];
};

/** A search that failed, then an answer without sources. */
const failedSearch: Script = (events) => {
  const search = call("s1", "web_search", { query: "weather in paris" }, events("web_search"));
  return [
    { type: "server-tool-call", call: search },
    {
      type: "server-tool-result",
      result: {
        callId: "s1",
        tool: "web_search",
        input: search.input,
        status: "failed",
        error: { code: "unavailable", message: "The search backend did not answer in time." },
        costMicroUsd: 0,
        durationMs: 10_000,
        events: search.events,
      },
    },
    { type: "text-start", id: "t2" },
    { type: "text-delta", id: "t2", delta: "I could not search the web just now." },
    { type: "text-end", id: "t2" },
    ...end,
  ];
};

const scripts: Record<string, Script> = { searchThenFetch, threeCallsInOneRound, failedSearch };

/** The result the engine folds from the same parts, in content order. */
function fold(parts: readonly CanonicalStreamPart[]): ResultContent[] {
  const content: ResultContent[] = [];
  const open = new Map<string, ResultContent>();
  for (const part of parts) {
    if (part.type === "reasoning-start" || part.type === "text-start") {
      const entry: ResultContent =
        part.type === "text-start" ? { type: "text", text: "" } : { type: "reasoning", text: "" };
      open.set(part.id, entry);
      content.push(entry);
    } else if (part.type === "text-delta" || part.type === "reasoning-delta") {
      const entry = open.get(part.id);
      if (entry?.type === "text" || entry?.type === "reasoning") entry.text += part.delta;
    } else if (part.type === "citation") {
      const entry = open.get(part.id);
      if (entry?.type === "text") entry.citations = [...(entry.citations ?? []), part.citation];
    } else if (part.type === "server-tool-call" || part.type === "server-tool-result") {
      content.push(part);
    }
  }
  return content;
}

interface Served {
  body: Record<string, unknown>;
  decoded?: CanonicalRequest;
}

const served: Served[] = [];
let server: Server;
let client: OpenAI;

/**
 * The scenario is the `model` (`scripted/<script>`). Events follow the decoded request, as the
 * engine decides them: a tool's own `events`, or `hi_tool_events` for every tool.
 */
function answer(body: Record<string, unknown>, decoded: CanonicalRequest): { sse?: string; json?: unknown } {
  const script = scripts[String(body.model).replace("scripted/", "")];
  assert.ok(script, `unknown scenario ${String(body.model)}`);
  const parts = script(
    (tool) =>
      decoded.toolEvents ||
      decoded.serverTools.some((activation) => activation.id === tool && activation.events),
  );
  const context: ResponsesEncodeContext = {
    requestId: "01JSERVERTOOLS0000000000",
    model: String(body.model),
    createdAt: 1_764_000_000,
    request: decoded,
  };
  const settlement: Settlement = { usage, costMicroUsd: 15_000, finishReason: "stop" };
  if (body.stream !== true) {
    const result = { content: fold(parts), finishReason: "stop" as const, usage };
    return { json: encodeResponsesResult(result, settlement, context, itemSeal) };
  }
  const encoder = createResponsesStreamEncoder(context, itemSeal);
  let sse = "";
  for (const part of parts) sse += encoder.push(part);
  return { sse: sse + encoder.finish(settlement) };
}

before(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      const record: Served = { body };
      served.push(record);
      try {
        record.decoded = decodeResponsesRequest(body, { itemSeal });
        const { sse, json } = answer(body, record.decoded);
        if (sse !== undefined) {
          response.writeHead(200, { "content-type": "text/event-stream" }).end(sse);
        } else {
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(json));
        }
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        response
          .writeHead(error.status, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: error.message, type: error.code, param: error.param } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: "sk-test", baseURL: `http://127.0.0.1:${port}/api/v1`, maxRetries: 0 });
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Request parameters with the server tools turned on, events or not. */
function params(script: string, events: boolean) {
  return {
    model: `scripted/${script}`,
    input: "What is the capital of France?",
    tools: [{ type: "web_search" }, { type: "web_fetch" }, { type: "datetime" }],
    hi_tool_events: events,
  } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
}

function streamParams(script: string, events: boolean): OpenAI.Responses.ResponseCreateParamsStreaming {
  return { ...params(script, events), stream: true };
}

type WebSearchCall = OpenAI.Responses.ResponseFunctionWebSearch;

function webSearchCalls(output: OpenAI.Responses.ResponseOutputItem[]): WebSearchCall[] {
  return output.filter((item): item is WebSearchCall => item.type === "web_search_call");
}

/**
 * Output items compared across the two modes: ids without their seal (a streamed message's id goes
 * out before its text, so only the non-streamed one carries it) and without the helper's `parsed`.
 */
function comparable(output: OpenAI.Responses.ResponseOutputItem[]): unknown {
  return JSON.parse(
    JSON.stringify(output, (key, value) =>
      key === "parsed" ? undefined : key === "id" && typeof value === "string" ? value.split(".")[0] : value,
    ),
  );
}

function annotationsOf(output: OpenAI.Responses.ResponseOutputItem[]) {
  return output.flatMap((item) =>
    item.type === "message"
      ? item.content.flatMap((part) => (part.type === "output_text" ? part.annotations : []))
      : [],
  );
}

test("create(): items in the order the tools ran, sources, the page read, and a cited answer", async () => {
  const response = await client.responses.create(params("searchThenFetch", false));
  assert.deepEqual(
    response.output.map((item) => item.type),
    ["reasoning", "message", "web_search_call", "web_search_call", "reasoning", "message"],
  );
  const [search, read] = webSearchCalls(response.output);
  assert.match(search.id, /^ws_srch_1\./, "the call id, sealed");
  assert.deepEqual(
    { status: search.status, action: search.action },
    {
      status: "completed",
      action: {
        type: "search",
        query: "capital of france",
        queries: ["capital of france"],
        sources: [
          { type: "url", url: FR },
          { type: "url", url: WIKI },
        ],
      },
    },
  );
  assert.deepEqual(
    { status: read.status, action: read.action },
    { status: "completed", action: { type: "open_page", url: FR } },
  );

  const answerText = `${ANSWER_HEAD}${ANSWER_CITE}.`;
  assert.equal(response.output_text, `Let me check.${answerText}`);
  const [annotation] = annotationsOf(response.output);
  assert.deepEqual(annotationsOf(response.output), [
    { type: "url_citation", url: FR, title: `Title of ${FR}`, start_index: 36, end_index: 75 },
  ]);
  assert.equal(
    answerText.slice(annotation.type === "url_citation" ? annotation.start_index : 0, 75),
    ANSWER_CITE,
    "offsets in UTF-16 units, end exclusive",
  );
});

test("create(): a failed search is a failed web_search_call with its query and no sources", async () => {
  const response = await client.responses.create(params("failedSearch", false));
  assert.deepEqual(
    response.output.map((item) => [item.type, "status" in item ? item.status : undefined]),
    [
      ["web_search_call", "failed"],
      ["message", "completed"],
    ],
  );
  assert.deepEqual(webSearchCalls(response.output)[0].action, {
    type: "search",
    query: "weather in paris",
    queries: ["weather in paris"],
    sources: [],
  });
});

for (const script of Object.keys(scripts)) {
  for (const events of [false, true]) {
    test(`stream() + finalResponse() hold every item and annotation of create(): ${script}, events ${events ? "on" : "off"}`, async () => {
      const expected = await client.responses.create(params(script, events));
      const stream = client.responses.stream(streamParams(script, events));
      const seen: string[] = [];
      for await (const event of stream) seen.push(event.type);
      const response = await stream.finalResponse();
      assert.equal(response.status, "completed");
      assert.deepEqual(comparable(response.output), comparable(expected.output));
      assert.ok(response.output.length > 0);
      assert.equal(response.output_text, expected.output_text);
      assert.ok(
        !seen.includes("keepalive") || events,
        "the helper's iterator yields keepalive frames only when on",
      );
      assert.equal(seen.filter((type) => type === "response.created").length, 1);
      assert.equal(seen.filter((type) => type === "response.in_progress").length, 1);
    });
  }
}

test("threeCallsInOneRound: two web_search_call items added before either is done; datetime has no item", async () => {
  const response = await client.responses.stream(streamParams("threeCallsInOneRound", false)).finalResponse();
  assert.deepEqual(
    webSearchCalls(response.output).map((item) => [item.id.split(".")[0], item.status, item.action.type]),
    [
      ["ws_a", "completed", "search"],
      ["ws_c", "completed", "open_page"],
    ],
  );
  assert.deepEqual(
    response.output.map((item) => item.type),
    ["web_search_call", "web_search_call", "message"],
  );
  assert.deepEqual(
    annotationsOf(response.output).map((annotation) => annotation.type === "url_citation" && annotation.url),
    [WIKI],
  );
});

/** Every event of a raw `create({stream: true})`, as the client yields them. */
async function rawEvents(script: string, events: boolean): Promise<Array<Record<string, unknown>>> {
  const stream = await client.responses.create(streamParams(script, events));
  const seen: Array<Record<string, unknown>> = [];
  for await (const event of stream) seen.push(event as unknown as Record<string, unknown>);
  return seen;
}

test("raw iteration yields the hi.tool_event payloads as keepalive events only when events are on", async () => {
  const off = await rawEvents("threeCallsInOneRound", false);
  assert.equal(off.filter((event) => event.type === "keepalive").length, 0);

  const on = await rawEvents("threeCallsInOneRound", true);
  const toolEvents = on
    .filter((event) => event.type === "keepalive")
    .map((event) => event.hi_tool_event as Record<string, unknown>);
  assert.deepEqual(
    toolEvents.map((payload) => [payload.tool, payload.phase]),
    [
      ["web_search", "started"],
      ["datetime", "started"],
      ["web_fetch", "started"],
      ["web_search", "completed"],
      ["datetime", "completed"],
      ["web_fetch", "completed"],
    ],
  );
  // Events name the item they belong to; datetime has none and keeps its call id.
  const items = webSearchCalls(
    (on.at(-1) as unknown as OpenAI.Responses.ResponseCompletedEvent).response.output,
  ).map((item) => item.id);
  assert.deepEqual(
    toolEvents.map((payload) => payload.call_id),
    [items[0], "b", items[1], items[0], "b", items[1]],
  );
  assert.deepEqual(toolEvents[3].output, { result_count: 1, urls: [WIKI] });
  assert.deepEqual(
    on.map((event) => event.sequence_number),
    on.map((_, index) => index),
    "tool events share the gap-free sequence",
  );
});

test("raw iteration: progress events per call, the annotation before its text is done", async () => {
  const events = await rawEvents("searchThenFetch", false);
  const types = events.map((event) => event.type);
  const added = events.find(
    (event) =>
      event.type === "response.output_item.added" &&
      (event.item as { type: string }).type === "web_search_call",
  );
  const searchId = (added?.item as { id: string } | undefined)?.id;
  assert.ok(searchId);
  assert.deepEqual(
    events.filter((event) => event.item_id === searchId).map((event) => event.type),
    [
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.web_search_call.completed",
    ],
  );
  const annotationAt = types.indexOf("response.output_text.annotation.added");
  assert.ok(annotationAt > 0 && annotationAt < types.lastIndexOf("response.output_text.done"));
  assert.deepEqual(events[annotationAt].annotation, {
    type: "url_citation",
    url: FR,
    title: `Title of ${FR}`,
    start_index: 36,
    end_index: 75,
  });
});

function lastDecodedMessages(): CanonicalMessage[] {
  const decoded = served.at(-1)?.decoded;
  assert.ok(decoded, "the gateway decoded the replay");
  return decoded.messages;
}

const FOLLOW_UP = { role: "user" as const, content: "And its population?" };

test("replay: the previous output sent back whole decodes, web_search_call items dropped", async () => {
  for (const stream of [false, true]) {
    const previous = stream
      ? await client.responses.stream(streamParams("searchThenFetch", false)).finalResponse()
      : await client.responses.create(params("searchThenFetch", false));
    const input = [
      { role: "user" as const, content: "What is the capital of France?" },
      ...(previous.output as OpenAI.Responses.ResponseInputItem[]),
      FOLLOW_UP,
    ];
    await client.responses.create({ ...params("failedSearch", false), input });
    const messages = lastDecodedMessages();
    assert.deepEqual(
      messages.map((message) => message.role),
      ["user", "assistant", "user"],
    );
    assert.deepEqual(
      messages[1].content.map((part) => [part.type, "text" in part ? part.text : ""]),
      [
        ["reasoning", "Search before answering."],
        ["text", "Let me check."],
        ["reasoning", "The page confirms it."],
        ["text", `${ANSWER_HEAD}${ANSWER_CITE}.`],
      ],
    );
  }
});

test("replay: every item by item_reference (web_search_call ones included) decodes to the same turn", async () => {
  const previous = await client.responses.create(params("searchThenFetch", false));
  await client.responses.create({
    ...params("failedSearch", false),
    input: [...(previous.output as OpenAI.Responses.ResponseInputItem[]), FOLLOW_UP],
  });
  const whole = lastDecodedMessages();
  await client.responses.create({
    ...params("failedSearch", false),
    input: [...previous.output.map((item) => ({ type: "item_reference" as const, id: item.id! })), FOLLOW_UP],
  });
  assert.deepEqual(lastDecodedMessages(), whole);
  assert.equal(whole.length, 2);
});

test("replay: a web_search_call reference the gateway did not issue is refused naming the item", async () => {
  await assert.rejects(
    client.responses.create({
      ...params("failedSearch", false),
      input: [{ type: "item_reference", id: "ws_68f0c2a1b9e48190a4" }, FOLLOW_UP],
    }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && /input\[0\]/.test(error.message),
  );
});
