/**
 * Server tools end to end, through a real gateway: a model (a fake upstream of each provider kind)
 * calls web_search, web_fetch or datetime in round 1 and answers in round 2 citing what it found;
 * the gateway runs the tool (a fake SearXNG, a page served on loopback, a fixed clock) and the
 * official clients read the answer in each format, streamed and not:
 *
 * - Chat: the joined content with `url_citation` annotations (create, and the stream helper's
 *   `finalChatCompletion()`), `usage.cost` including the tool's price.
 * - Responses: a `web_search_call` item (search with sources, or open_page) before the message,
 *   `url_citation` annotations (create, and `responses.stream()` + `finalResponse()`).
 * - Messages: `server_tool_use` and result blocks, text `citations`, `usage.server_tool_use`
 *   (create, and `messages.stream()` + `finalMessage()`).
 *
 * Every cell also checks what the model was sent in round 2 (its call and the tool's result, in
 * that provider's wire form: the fetched page, served on loopback through the escape hatch, as
 * markdown of its main content), the cost on the generation record, the raw stream's structure,
 * and the `hi.tool_event` frames: present (started, then completed) when the tool or the request
 * asked for them, and handed to the application by each SDK's stream helper; absent otherwise,
 * never in a non-streamed answer.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import {
  checkChatStream,
  checkMessagesStream,
  checkResponsesStream,
  TOOL_EVENT,
} from "../conformance/support/stream-rules.js";
import { parseSseFrames, type SseFrame } from "../conformance/support/wire-tap.js";
import type { UpstreamRequest } from "../helpers/conformance-gateway.js";
import { DEFAULT_HITS } from "../helpers/fake-search-backend.js";
import {
  type Canary,
  createTripwireNetwork,
  startCanary,
  type TripwireNetwork,
} from "../helpers/fetch-tripwire.js";
import {
  answer,
  assertExchangeCarried,
  callTools,
  offeredToolNames,
  type ScriptedCall,
  usage,
} from "../helpers/scripted-tool-model.js";
import {
  COMPLETION_MICRO_USD,
  FETCH_PRICE_MICRO_USD,
  LOOP_KINDS,
  type LoopKind,
  PROMPT_MICRO_USD,
  SEARCH_PRICE_MICRO_USD,
  type ServerToolsGateway,
  startServerToolsGateway,
} from "../helpers/server-tools-gateway.js";
import { readToolEvents } from "../helpers/tool-event-frames.js";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON is read field by field.
type Json = any;

const ARTICLE_HTML = readFileSync(
  new URL("../../src/server-tools/web-fetch/testdata/article-page.html", import.meta.url),
  "utf8",
);

/** Each round's usage, the same on every wire: round 1 calls, round 2 answers. */
const ROUND_1 = usage(100, 20);
const ROUND_2 = usage(300, 50);
const TOKENS_MICRO_USD =
  (ROUND_1.input + ROUND_2.input) * PROMPT_MICRO_USD +
  (ROUND_1.output + ROUND_2.output) * COMPLETION_MICRO_USD;

type ToolId = "web_search" | "web_fetch" | "datetime";
const TOOLS: readonly ToolId[] = ["web_search", "web_fetch", "datetime"];
type FormatId = "chat" | "responses" | "messages";
const FORMATS: readonly FormatId[] = ["chat", "responses", "messages"];
/** Who asks for hi.tool_event frames: the tool's activation, the whole request, or nobody. */
type EventsMode = "tool" | "request" | "off";

interface ToolScript {
  call: ScriptedCall;
  /** The model's round-2 text, in the pieces it streams. */
  answer: string[];
  /** The span of the answer that cites a source, and the source. */
  citation?: { span: string; url: string; title: string };
  resultIncludes: string[];
  resultExcludes?: string[];
  priceMicroUsd: number;
}

let context: ServerToolsGateway;
let page: Canary;
let network: TripwireNetwork;
let pageUrl: string;

function script(tool: ToolId): ToolScript {
  switch (tool) {
    case "web_search": {
      const hit = DEFAULT_HITS[0];
      const span = `([${hit.title}](${hit.url}))`;
      return {
        call: { name: "web_search", input: { query: "capital of France" } },
        answer: ["Paris is the capital of France ", span.slice(0, 12), span.slice(12), "."],
        citation: { span, url: hit.url, title: hit.title },
        resultIncludes: ['Web search results for "capital of France"', hit.url, hit.snippet],
        priceMicroUsd: SEARCH_PRICE_MICRO_USD,
      };
    }
    case "web_fetch": {
      const span = `([The Bread Lab](${pageUrl}))`;
      return {
        call: { name: "web_fetch", input: { url: pageUrl } },
        answer: ["Hydration is the ratio of water to flour ", span, "."],
        citation: { span, url: pageUrl, title: "Sourdough hydration explained | The Bread Lab" },
        // Markdown of the article, without the site's navigation and footer, nor any markup.
        resultIncludes: ["Hydration is the ratio of water to flour", "## Why hydration matters"],
        resultExcludes: ["Shop our flour", "All rights reserved", "<p>", "<nav"],
        priceMicroUsd: FETCH_PRICE_MICRO_USD,
      };
    }
    case "datetime":
      return {
        call: { name: "datetime", input: { timezone: "Europe/Paris" } },
        answer: ["It is 03:30 in Paris, ", "an hour into summer time."],
        resultIncludes: ['"utc":"2026-03-29T01:30:00Z"', "2026-03-29T03:30:00+02:00", "Europe/Paris"],
        priceMicroUsd: 0,
      };
  }
}

interface Cell {
  format: FormatId;
  tool: ToolId;
  stream: boolean;
  kind: LoopKind;
  events: EventsMode;
}

/** Every format × tool × streamed or not; the upstream kind rotates so each format meets each kind. */
const CELLS: Cell[] = FORMATS.flatMap((format, formatIndex) =>
  TOOLS.flatMap((tool, toolIndex) =>
    [false, true].map((stream, streamIndex): Cell => {
      const index = formatIndex * 6 + toolIndex * 2 + streamIndex;
      const modes: EventsMode[] = ["tool", "request", "off"];
      return {
        format,
        tool,
        stream,
        kind: LOOP_KINDS[index % LOOP_KINDS.length],
        // Non-streamed cells ask for events too: a JSON answer must carry none.
        events: stream ? modes[(toolIndex + formatIndex) % 3] : "request",
      };
    }),
  ),
);

before(async () => {
  page = await startCanary();
  page.route("/posts/hydration", (response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE_HTML);
  });
  pageUrl = `http://127.0.0.1:${page.port}/posts/hydration`;
  // The escape hatch lets web_fetch read this loopback page; the tripwire fails any other connect.
  network = createTripwireNetwork({ loopbackPorts: [page.port] });
  context = await startServerToolsGateway({
    webFetch: { unsafe_allow_loopback_for_tests: true, allowed_ports: [80, 443, page.port] },
    fetchNetwork: network,
  });
});

after(async () => {
  await context?.close();
  await page?.close();
});

test("every format renders each server tool natively, streamed and not, against every provider kind", async (t) => {
  for (const cell of CELLS) {
    const name = `${cell.format} ${cell.tool} ${cell.stream ? "streamed" : "not streamed"} via ${cell.kind} (events: ${cell.events})`;
    await t.test(name, async () => {
      await runCell(cell);
    });
  }
  assert.deepEqual(network.violations, [], "web_fetch connected only to the loopback page");
});

async function runCell(cell: Cell): Promise<void> {
  const tool = script(cell.tool);
  const upstream = context.upstreams[cell.kind];
  upstream.serve(
    callTools(cell.kind, [tool.call], { stream: cell.stream, usage: ROUND_1 }),
    answer(cell.kind, tool.answer, { stream: cell.stream, usage: ROUND_2 }),
  );
  const searchesBefore = context.search.requests.length;
  const pageHitsBefore = page.hits.length;
  const mark = context.tap.exchanges.length;

  const outcome = await DRIVERS[cell.format](cell, tool, upstream.model);

  // What the model was sent: the tools in round 1, its call and the tool's result in round 2.
  const calls = upstream.calls;
  assert.equal(calls.length, 2, "two rounds");
  assert.ok(offeredToolNames(cell.kind, calls[0].body).includes(tool.call.name), "round 1 offers the tool");
  assertExchangeCarried(cell.kind, calls[1], [
    { call: tool.call, resultIncludes: tool.resultIncludes, resultExcludes: tool.resultExcludes },
  ]);
  for (const call of calls)
    assert.equal(isStreamedCall(cell.kind, call), cell.stream, "upstream streamed like the client");

  // The tool ran once, where it should have.
  const searches = context.search.requests.slice(searchesBefore);
  assert.deepEqual(
    searches.map((request) => request.query.q),
    cell.tool === "web_search" ? ["capital of France"] : [],
  );
  assert.equal(page.hits.length - pageHitsBefore, cell.tool === "web_fetch" ? 1 : 0, "page fetches");

  // Billed: both rounds' tokens and the tool's price.
  const record = await context.lookupGeneration(outcome.id);
  assert.equal(record.status, "ok");
  assert.equal(record.cost_micro_usd, String(TOKENS_MICRO_USD + tool.priceMicroUsd));
  assert.deepEqual(
    record.tool_costs_micro_usd,
    tool.priceMicroUsd === 0 ? {} : { [cell.tool]: String(tool.priceMicroUsd) },
  );
  assert.equal(record.tokens_prompt, ROUND_1.input + ROUND_2.input);
  assert.equal(record.tokens_completion, ROUND_1.output + ROUND_2.output);

  // The raw exchange: the stream's structure, and hi.tool_event frames only where asked for.
  const exchanges = context.tap.since(mark);
  assert.equal(exchanges.length, 1);
  const body = await exchanges[0].body;
  if (!cell.stream) {
    assert.ok(!body.includes("hi_tool_event") && !body.includes(TOOL_EVENT), "no events in a JSON answer");
    return;
  }
  const frames = parseSseFrames(body);
  STREAM_RULES[cell.format](frames);
  const events: Json[] = readToolEvents(cell.format, body);
  assert.deepEqual(
    outcome.sdkEvents,
    events,
    "the stream helper hands every hi.tool_event to the application",
  );
  if (cell.events === "off") {
    assert.deepEqual(events, [], "no hi.tool_event frame unless asked for");
    return;
  }
  assert.deepEqual(
    events.map((event) => event.phase),
    ["started", "completed"],
  );
  const [started, completed] = events;
  for (const event of events) {
    assert.equal(event.tool, cell.tool);
    assert.deepEqual(event.input, tool.call.input);
    assert.equal(
      event.call_id,
      outcome.callWireId ?? started.call_id,
      "call_id is the call's id in the format",
    );
  }
  assert.equal(completed.call_id, started.call_id);
  assert.equal(completed.cost_micro_usd, tool.priceMicroUsd);
  assert.ok(Number.isInteger(completed.duration_ms) && completed.duration_ms >= 0);
  assert.deepEqual(completed.output, expectedEventOutput(cell.tool));
}

/** Gemini takes the switch in the path, every other wire in the body. */
function isStreamedCall(kind: LoopKind, call: UpstreamRequest): boolean {
  return kind === "google" ? call.path.includes(":streamGenerateContent") : call.body.stream === true;
}

function expectedEventOutput(tool: ToolId): Json {
  switch (tool) {
    case "web_search":
      return { result_count: DEFAULT_HITS.length, urls: DEFAULT_HITS.map((hit) => hit.url) };
    case "web_fetch":
      return {
        url: pageUrl,
        title: "Sourdough hydration explained | The Bread Lab",
        content_type: "text/html",
        bytes: Buffer.byteLength(ARTICLE_HTML),
        truncated: false,
      };
    case "datetime":
      return { utc: "2026-03-29T01:30:00Z", timezones: ["UTC", "Europe/Paris"] };
  }
}

const STREAM_RULES: Record<FormatId, (frames: SseFrame[]) => void> = {
  chat: checkChatStream,
  responses: checkResponsesStream,
  messages: checkMessagesStream,
};

interface CellOutcome {
  /** The response's id (the generation lookup takes it). */
  id: string;
  /** Streamed: the hi.tool_event payloads the SDK's stream helper yielded to the application. */
  sdkEvents?: Json[];
  /** The call's id as the format shows it, where it shows one. */
  callWireId?: string;
}

type Driver = (cell: Cell, tool: ToolScript, model: string) => Promise<CellOutcome>;

const PROMPT = "Answer with a source.";

const DRIVERS: Record<FormatId, Driver> = {
  chat: runChat,
  responses: runResponses,
  messages: runMessages,
};

/** The chat format's three ways to turn a tool on: plugins, a `<vendor>:<tool>` tool, web_search_options. */
function chatActivation(cell: Cell): Record<string, unknown> {
  const events = cell.events === "tool" ? { events: true } : {};
  const request = cell.events === "request" ? { hi_tool_events: true } : {};
  if (cell.tool === "web_search" && !cell.stream) {
    return { web_search_options: { search_context_size: "medium" }, ...request };
  }
  if (cell.tool === "web_fetch") return { tools: [{ type: "openrouter:web_fetch", ...events }], ...request };
  return { plugins: [{ id: cell.tool, ...events }], ...request };
}

async function runChat(cell: Cell, tool: ToolScript, model: string): Promise<CellOutcome> {
  const params = {
    model,
    messages: [{ role: "user" as const, content: PROMPT }],
    ...chatActivation(cell),
  } as OpenAI.ChatCompletionCreateParamsNonStreaming;
  let sdkEvents: Json[] | undefined;
  let completion: OpenAI.ChatCompletion;
  if (cell.stream) {
    const stream = context.openai.chat.completions.stream(
      params as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
    );
    const chunks: Json[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    completion = await stream.finalChatCompletion();
    sdkEvents = chunks
      .filter((chunk) => chunk.hi_tool_event !== undefined)
      .map((chunk) => chunk.hi_tool_event);
  } else {
    completion = await context.openai.chat.completions.create(params);
  }
  const choice = completion.choices[0];
  const message = choice.message as Json;
  const text = tool.answer.join("");
  assert.equal(message.content, text, "every round's text is one content");
  assert.equal(choice.finish_reason, "stop");
  assert.equal(message.tool_calls ?? undefined, undefined, "the server tool's call is not the caller's");
  if (tool.citation === undefined) {
    assert.equal(message.annotations, undefined, "no annotations without citations");
  } else {
    const start = text.indexOf(tool.citation.span);
    assert.deepEqual(message.annotations, [
      {
        type: "url_citation",
        url_citation: {
          url: tool.citation.url,
          title: tool.citation.title,
          start_index: start,
          end_index: start + tool.citation.span.length,
        },
      },
    ]);
  }
  const cost = (completion.usage as Json)?.cost;
  assert.equal(cost, (TOKENS_MICRO_USD + tool.priceMicroUsd) / 1e6, "usage.cost includes the tool's price");
  return { id: completion.id, sdkEvents };
}

function responsesTool(cell: Cell): Record<string, unknown> {
  const events = cell.events === "tool" ? { events: true } : {};
  // OpenAI's hosted search tool runs as the gateway's web_search.
  if (cell.tool === "web_search" && !cell.stream)
    return { type: "web_search_preview", search_context_size: "medium" };
  return { type: cell.tool, ...events };
}

async function runResponses(cell: Cell, tool: ToolScript, model: string): Promise<CellOutcome> {
  const params = {
    model,
    input: PROMPT,
    store: false,
    tools: [responsesTool(cell)],
    ...(cell.events === "request" ? { hi_tool_events: true } : {}),
  } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  let sdkEvents: Json[] | undefined;
  let response: OpenAI.Responses.Response;
  if (cell.stream) {
    const stream = context.openai.responses.stream(params as never);
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    response = await stream.finalResponse();
    sdkEvents = events.filter((event) => event.type === "keepalive").map((event) => event.hi_tool_event);
  } else {
    response = await context.openai.responses.create(params);
  }
  assert.equal(response.status, "completed");
  const output = response.output as Json[];
  const text = tool.answer.join("");
  const message = output.at(-1);
  assert.equal(message.type, "message");
  assert.equal(message.content.length, 1);
  assert.equal(message.content[0].text, text);
  assert.equal(response.output_text, text);
  let callWireId: string | undefined;
  if (cell.tool === "datetime") {
    assert.equal(output.length, 1, "datetime renders no item");
  } else {
    assert.equal(output.length, 2, "the call's item, then the message");
    const item = output[0];
    assert.equal(item.type, "web_search_call");
    assert.equal(item.status, "completed");
    assert.match(item.id, /^ws_/);
    callWireId = item.id;
    if (cell.tool === "web_search") {
      assert.deepEqual(item.action, {
        type: "search",
        query: "capital of France",
        queries: ["capital of France"],
        sources: DEFAULT_HITS.map((hit) => ({ type: "url", url: hit.url })),
      });
    } else {
      assert.deepEqual(item.action, { type: "open_page", url: pageUrl });
    }
  }
  const annotations = message.content[0].annotations;
  if (tool.citation === undefined) {
    assert.deepEqual(annotations, []);
  } else {
    const start = text.indexOf(tool.citation.span);
    assert.deepEqual(annotations, [
      {
        type: "url_citation",
        url: tool.citation.url,
        title: tool.citation.title,
        start_index: start,
        end_index: start + tool.citation.span.length,
      },
    ]);
  }
  return { id: response.id, sdkEvents, ...(callWireId === undefined ? {} : { callWireId }) };
}

function messagesActivation(cell: Cell): Record<string, unknown> {
  const events = cell.events === "tool" ? { events: true } : {};
  const request = cell.events === "request" ? { hi_tool_events: true } : {};
  switch (cell.tool) {
    case "web_search":
      return {
        tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3, ...events }],
        ...request,
      };
    case "web_fetch":
      return { tools: [{ type: "web_fetch_20250910", name: "web_fetch", ...events }], ...request };
    case "datetime":
      return { plugins: [{ id: "datetime", ...events }], ...request };
  }
}

async function runMessages(cell: Cell, tool: ToolScript, model: string): Promise<CellOutcome> {
  const params = {
    model,
    max_tokens: 1024,
    messages: [{ role: "user" as const, content: PROMPT }],
    ...messagesActivation(cell),
  } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  let sdkEvents: Json[] | undefined;
  let message: Anthropic.Message;
  if (cell.stream) {
    const stream = context.anthropic.messages.stream(params as never);
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    message = await stream.finalMessage();
    sdkEvents = events
      .filter((event) => event.type === TOOL_EVENT)
      .map(({ type: _type, ...payload }) => payload);
  } else {
    message = await context.anthropic.messages.create(params);
  }
  assert.equal(message.stop_reason, "end_turn");
  const content = message.content as Json[];
  const text = tool.answer.join("");
  const textBlock = content.at(-1);
  assert.equal(textBlock.type, "text");
  assert.equal(textBlock.text, text);
  assert.equal(message.usage.input_tokens, ROUND_1.input + ROUND_2.input);
  assert.equal(message.usage.output_tokens, ROUND_1.output + ROUND_2.output);
  assert.deepEqual(message.usage.server_tool_use, {
    web_search_requests: cell.tool === "web_search" ? 1 : 0,
    web_fetch_requests: cell.tool === "web_fetch" ? 1 : 0,
  });
  let callWireId: string | undefined;
  if (cell.tool === "datetime") {
    assert.equal(content.length, 1, "datetime has no block");
  } else {
    assert.equal(content.length, 3, "server_tool_use, its result, the text");
    const [use, result] = content;
    assert.equal(use.type, "server_tool_use");
    assert.equal(use.name, cell.tool);
    assert.deepEqual(use.input, tool.call.input);
    assert.match(use.id, /^srvtoolu_/);
    callWireId = use.id;
    assert.equal(result.tool_use_id, use.id);
    if (cell.tool === "web_search") {
      assert.equal(result.type, "web_search_tool_result");
      assert.deepEqual(
        result.content.map((entry: Json) => [entry.type, entry.url, entry.title]),
        DEFAULT_HITS.map((hit) => ["web_search_result", hit.url, hit.title]),
      );
      assert.equal(typeof result.content[0].encrypted_content, "string");
    } else {
      assert.equal(result.type, "web_fetch_tool_result");
      assert.equal(result.content.type, "web_fetch_result");
      assert.equal(result.content.url, pageUrl);
      assert.equal(result.content.content.type, "document");
      assert.equal(result.content.content.title, "Sourdough hydration explained | The Bread Lab");
      assert.match(result.content.content.source.data, /^Hydration is the ratio of water to flour/);
    }
  }
  if (tool.citation === undefined) {
    assert.equal(textBlock.citations ?? undefined, undefined, "uncited text has no citations");
  } else {
    assert.deepEqual(
      textBlock.citations.map((citation: Json) => [citation.type, citation.url, citation.title]),
      [["web_search_result_location", tool.citation.url, tool.citation.title]],
    );
    assert.equal(typeof textBlock.citations[0].cited_text, "string");
    assert.equal(typeof textBlock.citations[0].encrypted_index, "string");
  }
  return { id: message.id, sdkEvents, ...(callWireId === undefined ? {} : { callWireId }) };
}
