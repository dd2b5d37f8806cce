/**
 * Server tools in the Messages format, read by the official `@anthropic-ai/sdk` over real HTTP: a
 * loopback server decodes each request with the format's decoder and answers with the format's
 * encoders for one scripted run (thinking and text, then a web_search, a web_fetch, a failed fetch
 * and a datetime call with their results, then a cited answer). `hi_tool_events: true` in the
 * request asks for `hi.tool_event` frames, as it does at the gateway.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import type {
  CanonicalRequest,
  CanonicalResult,
  CanonicalStreamPart,
  CanonicalUsage,
  OpaqueReasoningState,
  ServerToolCall,
  ServerToolResult,
  UrlCitation,
} from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import { createMessagesErrorEnvelope } from "../../errors/envelopes.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { EncodeContext } from "../ingress-format.js";
import { decodeMessagesRequest } from "./decode-request.js";
import { encodeMessagesResult } from "./encode-result.js";
import { createMessagesStreamEncoder } from "./stream-encoder.js";

const MODEL = "anthropic/claude-sonnet-4.5";

const usage: CanonicalUsage = {
  inputTokens: 3_000,
  outputTokens: 400,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 50,
};

const settlement: Settlement = {
  usage,
  costMicroUsd: 12_000,
  finishReason: "stop",
  serverToolCalls: { web_search: 1, web_fetch: 2, datetime: 1 },
};

const signature: OpaqueReasoningState = {
  providerKind: "anthropic",
  upstreamModel: "claude-sonnet-4-5-20250929",
  signature: "EqEECkYICxgCKkAo3UA4",
};

/** The run's four calls, all made in round 1, and their results, with events on or off. */
function scriptedTools(events: boolean): { calls: ServerToolCall[]; results: ServerToolResult[] } {
  const calls: ServerToolCall[] = [
    { id: "s1", tool: "web_search", input: { query: "Lyon population" }, events },
    { id: "f1", tool: "web_fetch", input: { url: "https://lyon.test/stats" }, events },
    { id: "f2", tool: "web_fetch", input: { url: "https://down.test/" }, events },
    { id: "d1", tool: "datetime", input: { timezone: "Europe/Paris" }, events },
  ];
  const base = { costMicroUsd: 0, durationMs: 40, events };
  const results: ServerToolResult[] = [
    {
      ...base,
      callId: "s1",
      tool: "web_search",
      input: calls[0].input,
      status: "completed",
      costMicroUsd: 5_000,
      output: {
        kind: "search",
        query: "Lyon population",
        sources: [
          {
            url: "https://lyon.test/",
            title: "Lyon",
            snippet: "Lyon has 520,000 inhabitants.",
            pageAge: "3 days ago",
          },
          { url: "https://other.test/", title: "other.test", snippet: "", pageAge: null },
        ],
      },
    },
    {
      ...base,
      callId: "f1",
      tool: "web_fetch",
      input: calls[1].input,
      status: "completed",
      output: {
        kind: "fetch",
        url: "https://lyon.test/stats",
        finalUrl: "https://lyon.test/stats",
        title: "Lyon in figures",
        retrievedAt: "2026-03-01T09:30:00.000Z",
        contentType: "text/html",
        bytes: 4_096,
        text: "# Lyon in figures\n\nMetro area: 2.3 million.",
        truncated: false,
      },
    },
    {
      ...base,
      callId: "f2",
      tool: "web_fetch",
      input: calls[2].input,
      status: "failed",
      error: { code: "url_not_accessible", message: "The page could not be read." },
    },
    {
      ...base,
      callId: "d1",
      tool: "datetime",
      input: calls[3].input,
      status: "completed",
      output: { kind: "datetime", utc: "2026-03-01T09:30:00Z", timezones: ["Europe/Paris"] },
    },
  ];
  return { calls, results };
}

const citations: UrlCitation[] = [
  {
    url: "https://lyon.test/",
    title: "Lyon",
    startIndex: 0,
    endIndex: 28,
    citedText: "Lyon has 520,000 inhabitants.",
  },
  {
    url: "https://lyon.test/stats",
    title: "Lyon in figures",
    startIndex: 30,
    endIndex: 58,
    citedText: "Metro area: 2.3 million.",
  },
];

const answer = ["Lyon has 520,000 inhabitants", "; its metro area 2.3 million", " (as of today)."];

function scriptedParts(events: boolean): CanonicalStreamPart[] {
  const { calls, results } = scriptedTools(events);
  return [
    { type: "response-metadata", upstreamModel: "claude-sonnet-4-5-20250929" },
    { type: "reasoning-start", id: "r1" },
    { type: "reasoning-delta", id: "r1", delta: "I need current figures." },
    { type: "reasoning-end", id: "r1", providerState: signature },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "Let me check." },
    { type: "text-end", id: "t1" },
    ...calls.map((call): CanonicalStreamPart => ({ type: "server-tool-call", call })),
    ...results.map((result): CanonicalStreamPart => ({ type: "server-tool-result", result })),
    { type: "text-start", id: "t2" },
    { type: "text-delta", id: "t2", delta: answer[0] },
    { type: "citation", id: "t2", citation: citations[0] },
    { type: "text-delta", id: "t2", delta: answer[1] },
    { type: "citation", id: "t2", citation: citations[1] },
    { type: "text-delta", id: "t2", delta: answer[2] },
    { type: "text-end", id: "t2" },
    { type: "usage", usage },
    { type: "finish", reason: "stop" },
  ];
}

/** The same run folded, as the engine hands it to a non-streamed request. */
function scriptedResult(): CanonicalResult {
  const { calls, results } = scriptedTools(false);
  return {
    upstreamModel: "claude-sonnet-4-5-20250929",
    content: [
      { type: "reasoning", text: "I need current figures.", providerState: signature },
      { type: "text", text: "Let me check." },
      ...calls.map((call) => ({ type: "server-tool-call" as const, call })),
      ...results.map((result) => ({ type: "server-tool-result" as const, result })),
      { type: "text", text: answer.join(""), citations },
    ],
    finishReason: "stop",
    usage,
  };
}

/** Every request the server decoded, in order. */
const decoded: CanonicalRequest[] = [];
let server: Server;
let client: Anthropic;

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const requestId = `req_${decoded.length + 1}`;
  let canonical: CanonicalRequest;
  try {
    canonical = decodeMessagesRequest(await readBody(request));
  } catch (error) {
    const gatewayError =
      error instanceof GatewayError ? error : new GatewayError("internal_error", String(error));
    response.writeHead(gatewayError.status, { "content-type": "application/json" });
    response.end(JSON.stringify(createMessagesErrorEnvelope(gatewayError, requestId)));
    return;
  }
  decoded.push(canonical);
  const context: EncodeContext = { requestId, model: canonical.model, createdAt: 1_772_000_000 };
  if (!canonical.stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(encodeMessagesResult(scriptedResult(), settlement, context)));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  const encoder = createMessagesStreamEncoder(context);
  // One write per part, as the gateway writes them, so the client reads the frames as they come.
  for (const part of scriptedParts(canonical.toolEvents)) {
    const frames = encoder.push(part);
    if (frames !== "") response.write(frames);
  }
  response.end(encoder.finish(settlement));
}

before(async () => {
  server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new Anthropic({ apiKey: "sk-test", baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

type Params = Omit<Anthropic.MessageCreateParamsNonStreaming, "stream"> & { hi_tool_events?: boolean };

function params(events: boolean): Params {
  const body: Params = {
    model: MODEL,
    max_tokens: 1024,
    messages: [{ role: "user", content: "How many people live in Lyon?" }],
    tools: [
      { type: "web_search_20250305", name: "web_search" },
      { type: "web_fetch_20250910", name: "web_fetch" },
    ],
  };
  if (events) body.hi_tool_events = true;
  return body;
}

/** Content as JSON: what a client stores and sends back (the SDK's lazy tool-input getters resolved). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

function blockTypes(message: Anthropic.Message): string[] {
  return message.content.map((block) =>
    block.type === "server_tool_use" ? `use:${block.name}` : block.type,
  );
}

test("messages.create(): blocks in run order, Anthropic's result blocks, a cited answer and the request counters", async () => {
  const message = await client.messages.create({ ...params(false), stream: false });
  assert.deepEqual(blockTypes(message), [
    "thinking",
    "text",
    "use:web_search",
    "use:web_fetch",
    "use:web_fetch",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "web_fetch_tool_result",
    "text",
  ]);
  const [, , search, fetch, failedFetch, found, page, failure, cited] = message.content;
  assert.deepEqual(search, {
    type: "server_tool_use",
    id: "srvtoolu_s1",
    name: "web_search",
    input: { query: "Lyon population" },
  });
  assert.ok(fetch.type === "server_tool_use" && failedFetch.type === "server_tool_use");
  assert.deepEqual([fetch.id, failedFetch.id], ["srvtoolu_f1", "srvtoolu_f2"]);

  assert.ok(found.type === "web_search_tool_result" && Array.isArray(found.content));
  assert.equal(found.tool_use_id, "srvtoolu_s1");
  assert.deepEqual(
    found.content.map((result) => [
      result.url,
      result.title,
      result.page_age,
      result.encrypted_content.length > 0,
    ]),
    [
      ["https://lyon.test/", "Lyon", "3 days ago", true],
      ["https://other.test/", "other.test", null, true],
    ],
  );
  assert.ok(page.type === "web_fetch_tool_result" && page.content.type === "web_fetch_result");
  assert.equal(page.tool_use_id, "srvtoolu_f1");
  assert.equal(page.content.url, "https://lyon.test/stats");
  assert.equal(page.content.retrieved_at, "2026-03-01T09:30:00.000Z");
  assert.equal(page.content.content.title, "Lyon in figures");
  assert.deepEqual(page.content.content.source, {
    type: "text",
    media_type: "text/plain",
    data: "# Lyon in figures\n\nMetro area: 2.3 million.",
  });
  assert.deepEqual(failure, {
    type: "web_fetch_tool_result",
    tool_use_id: "srvtoolu_f2",
    content: { type: "web_fetch_tool_result_error", error_code: "url_not_accessible" },
  });

  assert.ok(cited.type === "text");
  assert.equal(cited.text, answer.join(""));
  assert.deepEqual(
    cited.citations?.map((citation) =>
      citation.type === "web_search_result_location"
        ? [citation.url, citation.title, citation.cited_text, citation.encrypted_index.length > 0]
        : citation.type,
    ),
    [
      ["https://lyon.test/", "Lyon", "Lyon has 520,000 inhabitants.", true],
      ["https://lyon.test/stats", "Lyon in figures", "Metro area: 2.3 million.", true],
    ],
  );
  assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 2 });
  assert.equal(message.usage.input_tokens, 3_000);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(decoded.at(-1)?.toolEvents, false);
});

for (const events of [false, true]) {
  test(`messages.stream() with events ${events ? "on" : "off"}: finalMessage() has the non-streamed content, citations and counters`, async () => {
    const expected = await client.messages.create({ ...params(false), stream: false });
    const stream = client.messages.stream(params(events));
    const seenCitations: unknown[] = [];
    stream.on("citation", (citation) => seenCitations.push(citation));
    const message = await stream.finalMessage();
    assert.equal(decoded.at(-1)?.toolEvents, events);
    assert.deepEqual(plain(message.content), plain(expected.content));
    assert.equal(seenCitations.length, 2);
    assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 2 });
    assert.equal(message.usage.input_tokens, 3_000);
    assert.equal(message.usage.output_tokens, 400);
    assert.equal(message.stop_reason, "end_turn");
    assert.equal(await stream.finalText(), `Let me check. ${answer.join("")}`);
  });
}

test("raw stream: hi.tool_event frames for each call's start and end only when asked for, and never inside a block", async () => {
  const readRaw = async (events: boolean) => {
    const raw: Array<{ type: string; [key: string]: unknown }> = [];
    const stream = await client.messages.create({ ...params(events), stream: true });
    // hi.tool_event is not in the SDK's event types: the SDK yields it as it came.
    for await (const event of stream as AsyncIterable<{ type: string; [key: string]: unknown }>) {
      // The message id names the request; the rest must not depend on it.
      raw.push(
        event.type === "message_start"
          ? { ...event, message: { ...(event.message as object), id: "" } }
          : event,
      );
    }
    return raw;
  };
  const quiet = await readRaw(false);
  assert.equal(quiet.filter((event) => event.type === "hi.tool_event").length, 0);

  const loud = await readRaw(true);
  const toolEvents = loud.filter((event) => event.type === "hi.tool_event");
  assert.deepEqual(
    toolEvents.map((event) => [event.tool, event.phase, event.call_id]),
    [
      ["web_search", "started", "srvtoolu_s1"],
      ["web_fetch", "started", "srvtoolu_f1"],
      ["web_fetch", "started", "srvtoolu_f2"],
      ["datetime", "started", "d1"],
      ["web_search", "completed", "srvtoolu_s1"],
      ["web_fetch", "completed", "srvtoolu_f1"],
      ["web_fetch", "failed", "srvtoolu_f2"],
      ["datetime", "completed", "d1"],
    ],
  );
  assert.deepEqual(toolEvents[6].error, {
    code: "url_not_accessible",
    message: "The page could not be read.",
  });
  let open = false;
  for (const event of loud) {
    if (event.type === "content_block_start") open = true;
    else if (event.type === "content_block_stop") open = false;
    else if (event.type === "hi.tool_event")
      assert.equal(open, false, "no event between a block's start and stop");
  }
  // The events add frames, nothing else: without them the stream is the same.
  assert.deepEqual(
    loud.filter((event) => event.type !== "hi.tool_event"),
    quiet,
  );
});

test("replay: the previous answer, non-streamed or as the SDK assembled a stream, is accepted back as the assistant turn", async () => {
  const nonStreamed = await client.messages.create({ ...params(false), stream: false });
  const streamed = await client.messages.stream(params(true)).finalMessage();
  for (const previous of [nonStreamed, streamed]) {
    const next = await client.messages.create({
      ...params(false),
      stream: false,
      messages: [
        ...params(false).messages,
        { role: "assistant", content: plain(previous.content) as Anthropic.ContentBlockParam[] },
        { role: "user", content: "And Marseille?" },
      ],
    });
    assert.equal(next.type, "message");
    const turn = decoded.at(-1)?.messages[1];
    assert.deepEqual(turn, {
      role: "assistant",
      content: [
        { type: "reasoning", text: "I need current figures.", providerState: signature },
        { type: "text", text: "Let me check." },
        { type: "text", text: answer.join("") },
      ],
    });
  }
});

test("replay: a server_tool_use of a tool the gateway never runs is refused with a 400 naming it", async () => {
  const sent = client.messages.create({
    ...params(false),
    stream: false,
    messages: [
      ...params(false).messages,
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_x", name: "code_execution", input: { code: "1" } },
        ],
      },
    ],
  });
  await assert.rejects(sent, (error: unknown) => {
    assert.ok(error instanceof Anthropic.BadRequestError);
    assert.match(error.message, /messages\[1\]\.content\[0\]\.name/);
    return true;
  });
});
