/**
 * The official `openai` client against the chat-completions rendering of a run with a server tool.
 * A loopback HTTP server stands in for the gateway's generation endpoint: it decodes the request with
 * the chat format (so `plugins[].events` decides whether events are wanted, as it does in the
 * gateway) and answers with the format's encoder output for a scripted run of two rounds: some text
 * and a web_search call with its result, then an answer citing two sources, usage and finish.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import type { CanonicalResult, CanonicalStreamPart, CanonicalUsage } from "../../canonical/index.js";
import type { ServerToolCall, ServerToolResult } from "../../canonical/server-tool.js";
import type { Settlement } from "../../canonical/settlement.js";
import { chatCompletionsFormat } from "./index.js";

const usage: CanonicalUsage = {
  inputTokens: 900,
  outputTokens: 60,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
};

const settlement: Settlement = {
  usage,
  costMicroUsd: 7300,
  finishReason: "stop",
  serverToolCalls: { web_search: 1 },
};

const ROUND_1_TEXT = "Let me search. ";
const ANSWER_PIECES = [
  "Paris is the capital ",
  "([example.com](https://example.com/fr)).",
  " Its river is the Seine (wiki).",
];
const ANSWER = ANSWER_PIECES.join("");
const CONTENT = ROUND_1_TEXT + ANSWER;

const citations = [
  {
    url: "https://example.com/fr",
    title: "France",
    startIndex: ANSWER.indexOf("(["),
    endIndex: ANSWER.indexOf("))") + 2,
    citedText: "Paris is the capital of France.",
  },
  {
    url: "https://wiki.test/seine",
    title: "Seine",
    startIndex: ANSWER.indexOf("(wiki)"),
    endIndex: ANSWER.indexOf("(wiki)") + "(wiki)".length,
    citedText: "",
  },
];

/** What a client must end up with: both citations, as offsets into the whole content. */
const expectedAnnotations = citations.map((citation) => ({
  type: "url_citation",
  url_citation: {
    url: citation.url,
    title: citation.title,
    start_index: ROUND_1_TEXT.length + citation.startIndex,
    end_index: ROUND_1_TEXT.length + citation.endIndex,
  },
}));

type SearchOutcome = "completed" | "failed";

function searchCall(events: boolean): ServerToolCall {
  return { id: "call_ws1", tool: "web_search", input: { query: "capital of France" }, events };
}

function searchResult(events: boolean, outcome: SearchOutcome): ServerToolResult {
  const call = searchCall(events);
  const common = { callId: call.id, tool: call.tool, input: call.input, events };
  return outcome === "completed"
    ? {
        ...common,
        status: "completed",
        output: {
          kind: "search",
          query: "capital of France",
          sources: citations.map((c) => ({
            url: c.url,
            title: c.title,
            snippet: c.citedText,
            pageAge: null,
          })),
        },
        costMicroUsd: 5000,
        durationMs: 120,
      }
    : {
        ...common,
        status: "failed",
        error: { code: "unavailable", message: "The search backend did not answer." },
        costMicroUsd: 0,
        durationMs: 3000,
      };
}

/** The run as the engine streams it. */
function streamedRun(events: boolean, outcome: SearchOutcome): CanonicalStreamPart[] {
  const parts: CanonicalStreamPart[] = [
    { type: "response-metadata", upstreamModel: "gpt-4o-mini" },
    { type: "text-start", id: "round1_text" },
    { type: "text-delta", id: "round1_text", delta: ROUND_1_TEXT },
    { type: "text-end", id: "round1_text" },
    { type: "server-tool-call", call: searchCall(events) },
    { type: "server-tool-result", result: searchResult(events, outcome) },
    { type: "text-start", id: "round2_text" },
  ];
  let streamed = 0;
  for (const piece of ANSWER_PIECES) {
    parts.push({ type: "text-delta", id: "round2_text", delta: piece });
    streamed += piece.length;
    // A citation follows the delta that completed its span.
    for (const citation of citations) {
      if (citation.endIndex <= streamed && citation.endIndex > streamed - piece.length) {
        parts.push({ type: "citation", id: "round2_text", citation });
      }
    }
  }
  parts.push(
    { type: "text-end", id: "round2_text" },
    { type: "usage", usage },
    { type: "finish", reason: "stop" },
  );
  return parts;
}

/** The same run folded into one result (non-streamed answers never carry events). */
function foldedRun(): CanonicalResult {
  return {
    upstreamModel: "gpt-4o-mini",
    content: [
      { type: "text", text: ROUND_1_TEXT },
      { type: "server-tool-call", call: searchCall(false) },
      { type: "server-tool-result", result: searchResult(false, "completed") },
      { type: "text", text: ANSWER, citations },
    ],
    finishReason: "stop",
    usage,
  };
}

let server: Server;
let baseURL: string;
/** The search outcome the stand-in scripts for the next request. */
let outcome: SearchOutcome = "completed";
/** Rewrites the SSE text before it is sent (to show what a client does with other frames). */
let rewriteStream: (sse: string) => string = (sse) => sse;

before(async () => {
  server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const request = chatCompletionsFormat.decode(JSON.parse(raw));
    const context = { requestId: "req_sdk", model: request.model, createdAt: 1_764_962_401 };
    const events =
      request.toolEvents || request.serverTools.some((tool) => tool.id === "web_search" && tool.events);
    if (!request.stream) {
      const body = chatCompletionsFormat.encodeResult(foldedRun(), settlement, context);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    const encoder = chatCompletionsFormat.createStreamEncoder(context);
    let sse = "";
    for (const part of streamedRun(events, outcome)) sse += encoder.push(part);
    sse += encoder.finish(settlement);
    res.writeHead(200, { "content-type": "text/event-stream" });
    // One write per frame, as the gateway's SSE writer sends them.
    for (const frame of rewriteStream(sse).split(/(?<=\n\n)/)) res.write(frame);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL, maxRetries: 0, timeout: 10_000 });
}

/** A request activating web_search as a plugin, with or without events. */
function params(events: boolean) {
  return {
    model: "openai/gpt-4o-mini",
    messages: [{ role: "user" as const, content: "What is the capital of France?" }],
    plugins: [{ id: "web_search", events }],
  };
}

type ToolEventChunk = OpenAI.ChatCompletionChunk & { hi_tool_event?: Record<string, unknown> };

async function collectRawChunks(events: boolean): Promise<ToolEventChunk[]> {
  const chunks: ToolEventChunk[] = [];
  const stream = await client().chat.completions.create({ ...params(events), stream: true });
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function resetScript(): void {
  outcome = "completed";
  rewriteStream = (sse) => sse;
}

test("create() without streaming: the message holds the whole content and both citations as annotations", async () => {
  resetScript();
  const completion = await client().chat.completions.create(params(false));
  const { message } = completion.choices[0];
  assert.equal(message.content, CONTENT);
  assert.deepEqual(message.annotations, expectedAnnotations);
  assert.deepEqual(
    message.annotations?.map(({ url_citation: span }) => CONTENT.slice(span.start_index, span.end_index)),
    ["([example.com](https://example.com/fr))", "(wiki)"],
  );
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.equal(message.tool_calls, undefined, "the server-tool call is not shown as a client tool call");
});

for (const events of [true, false]) {
  test(`stream() + finalChatCompletion() with events ${events ? "on" : "off"}: full content and every annotation`, async () => {
    resetScript();
    const stream = client().chat.completions.stream(params(events));
    const completion = await stream.finalChatCompletion();
    const [choice] = completion.choices;
    assert.equal(completion.id, "gen-req_sdk");
    assert.equal(choice.message.role, "assistant");
    assert.equal(choice.message.content, CONTENT);
    assert.deepEqual(choice.message.annotations, expectedAnnotations);
    assert.equal(choice.finish_reason, "stop");
    assert.equal(completion.usage?.total_tokens, 960);
  });
}

test("raw iteration with events on yields the hi.tool_event chunks, choices empty, between the rounds", async () => {
  resetScript();
  const chunks = await collectRawChunks(true);
  const eventChunks = chunks.filter((chunk) => chunk.hi_tool_event !== undefined);
  assert.deepEqual(
    eventChunks.map((chunk) => [
      chunk.id,
      chunk.choices,
      chunk.hi_tool_event?.phase,
      chunk.hi_tool_event?.call_id,
    ]),
    [
      ["gen-req_sdk", [], "started", "call_ws1"],
      ["gen-req_sdk", [], "completed", "call_ws1"],
    ],
  );
  assert.deepEqual(eventChunks[1].hi_tool_event?.output, {
    result_count: 2,
    urls: ["https://example.com/fr", "https://wiki.test/seine"],
  });
  const contentBefore = (chunk: ToolEventChunk) =>
    chunks
      .slice(0, chunks.indexOf(chunk))
      .map((c) => c.choices[0]?.delta.content ?? "")
      .join("");
  assert.equal(contentBefore(eventChunks[0]), ROUND_1_TEXT, "the call's event follows round 1's text");
  assert.equal(contentBefore(eventChunks[1]), ROUND_1_TEXT, "the result's event precedes round 2's text");
  assert.ok(
    eventChunks.every((chunk) => chunk.usage === undefined),
    "event chunks carry no usage a client could add up",
  );
});

test("raw iteration with events off yields no hi.tool_event chunk and no chunk without choices but the usage one", async () => {
  resetScript();
  const chunks = await collectRawChunks(false);
  assert.ok(chunks.every((chunk) => chunk.hi_tool_event === undefined));
  const withoutChoices = chunks.filter((chunk) => chunk.choices.length === 0);
  assert.equal(withoutChoices.length, 1);
  assert.equal(withoutChoices[0], chunks.at(-1));
  assert.equal(withoutChoices[0].usage?.total_tokens, 960);
});

test("a failed search's events carry the failure in the payload: neither raw iteration nor the helper throws", async () => {
  resetScript();
  outcome = "failed";
  const chunks = await collectRawChunks(true);
  const ended = chunks.find((chunk) => chunk.hi_tool_event?.phase === "failed");
  assert.deepEqual(ended?.hi_tool_event?.error, {
    code: "unavailable",
    message: "The search backend did not answer.",
  });
  const completion = await client().chat.completions.stream(params(true)).finalChatCompletion();
  assert.equal(completion.choices[0].message.content, CONTENT);
});

test("the chunk envelope is what keeps the helper working: the same events without choices break it", async () => {
  resetScript();
  const completion = await client().chat.completions.stream(params(true)).finalChatCompletion();
  assert.equal(completion.choices[0].message.content, CONTENT);

  // The helper iterates every chunk's `choices`: an event frame without them throws.
  let rewritten = 0;
  rewriteStream = (sse) =>
    sse.replace(/^event: hi\.tool_event\ndata: (.*)$/gm, (_frame, json: string) => {
      const { choices: _choices, ...rest } = JSON.parse(json);
      rewritten++;
      return `event: hi.tool_event\ndata: ${JSON.stringify(rest)}`;
    });
  await assert.rejects(
    client().chat.completions.stream(params(true)).finalChatCompletion(),
    /choices is not iterable/,
  );
  assert.equal(rewritten, 2, "both event frames were stripped of their choices");
});
