/**
 * Anthropic's own web search and fetch through the adapter, against the loopback fake: the tools
 * as sent (versions, limits, options, the fetch beta), the blocks of an answer as server-tool
 * calls, results and citations (streamed and not alike), the blocks kept verbatim for the rest of
 * the turn and sent back only to the model that made them, and the recorded traffic.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall, createTestModel } from "../../../test/helpers/adapter-inputs.js";
import {
  anthropicReply,
  type FakeAnthropicUpstream,
  startFakeAnthropicUpstream,
} from "../../../test/helpers/fake-anthropic-upstream.js";
import {
  ANTHROPIC_TOOL_USE_ID,
  anthropicSearchEvents,
  anthropicSearchMessage,
  CITED_SENTENCE,
  FIRST_PAGE,
  readRecordedFixture,
  SEARCH_QUERY,
  SECOND_PAGE,
  UNCITED_SENTENCE,
} from "../../../test/helpers/native-search-turns.js";
import type {
  CanonicalRequest,
  CanonicalStreamPart,
  NativeServerTool,
  ResultContent,
} from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { readSseEvents } from "../shared/sse-reader.js";
import { createAnthropicAdapter } from "./adapter.js";
import { convertMessages } from "./convert-messages.js";
import { parseAnthropicResponse } from "./parse-response.js";
import { parseAnthropicStream } from "./parse-stream.js";

let upstream: FakeAnthropicUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createAnthropicAdapter({ httpClient });

before(async () => {
  upstream = await startFakeAnthropicUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

const SEARCH: NativeServerTool = { tool: "web_search", maxUses: 5 };

function callFor(request: Partial<CanonicalRequest>): UpstreamCall {
  const call = createTestCall({
    request,
    provider: { kind: "anthropic", baseUrl: upstream.baseUrl, apiKey: "sk-ant-test-0123456789" },
  });
  return { ...call, model: createTestModel() };
}

/** Parts folded into content (provider state kept), so a stream compares with a JSON answer. */
function fold(parts: CanonicalStreamPart[]): ResultContent[] {
  const content: ResultContent[] = [];
  const texts = new Map<string, Extract<ResultContent, { type: "text" }>>();
  for (const part of parts) {
    if (part.type === "text-start") {
      const entry: Extract<ResultContent, { type: "text" }> = { type: "text", text: "" };
      texts.set(part.id, entry);
      content.push(entry);
    } else if (part.type === "text-delta") texts.get(part.id)!.text += part.delta;
    else if (part.type === "citation") {
      const entry = texts.get(part.id)!;
      entry.citations = [...(entry.citations ?? []), part.citation];
    } else if (part.type === "server-tool-call" || part.type === "server-tool-result") {
      const { type, ...rest } = part;
      content.push({ type, ...rest } as ResultContent);
    }
  }
  return content;
}

/** The results' dates are the parse time for lack of one: left out of comparisons. */
const withoutVolatile = (content: ResultContent[]) => JSON.parse(JSON.stringify(content));

test("the tools go as Anthropic's own, with their limits and options; web_fetch adds its beta", async () => {
  upstream.enqueue(anthropicReply.json(anthropicSearchMessage()));
  await adapter.generate(
    callFor({
      tools: [{ name: "lookup", parameters: { type: "object" } }],
      anthropicBeta: ["context-1m-2025-08-07"],
      nativeServerTools: [
        {
          tool: "web_search",
          maxUses: 3,
          allowedDomains: ["example.com"],
          userLocation: { city: "Lyon", country: "FR" },
          searchContextSize: "high",
        },
        { tool: "web_fetch", maxUses: 2, blockedDomains: ["evil.example"], maxContentTokens: 4_000 },
      ],
    }),
  );
  const sent = upstream.requests.at(-1)!;
  assert.deepEqual(sent.body.tools, [
    { name: "lookup", input_schema: { type: "object" } },
    {
      type: "web_search_20250305",
      name: "web_search",
      max_uses: 3,
      allowed_domains: ["example.com"],
      user_location: { type: "approximate", city: "Lyon", country: "FR" },
    },
    {
      type: "web_fetch_20250910",
      name: "web_fetch",
      max_uses: 2,
      blocked_domains: ["evil.example"],
      max_content_tokens: 4_000,
    },
  ]);
  assert.equal(sent.headers["anthropic-beta"], "context-1m-2025-08-07,web-fetch-2025-09-10");

  upstream.enqueue(anthropicReply.json(anthropicSearchMessage()));
  await adapter.generate(callFor({ nativeServerTools: [SEARCH] }));
  const searchOnly = upstream.requests.at(-1)!;
  assert.deepEqual(searchOnly.body.tools, [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }]);
  assert.equal(searchOnly.headers["anthropic-beta"], undefined);
  assert.equal(searchOnly.body.tool_choice, undefined);
});

test("a searched answer: the call, its result, the cited text; streamed and not alike", async () => {
  upstream.enqueue(anthropicReply.json(anthropicSearchMessage()));
  const result = await adapter.generate(callFor({ nativeServerTools: [SEARCH] }));
  upstream.enqueue(anthropicReply.sse(anthropicSearchEvents(), { padding: true }));
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(callFor({ nativeServerTools: [SEARCH], stream: true })))
    parts.push(part);

  const id = ANTHROPIC_TOOL_USE_ID.replace("srvtoolu_", "");
  const [call, searched, citedText, plainText] = result.content;
  assert.equal(result.content.length, 4);
  assert.deepEqual(call.type === "server-tool-call" && call.call, {
    id,
    tool: "web_search",
    input: { query: SEARCH_QUERY },
    events: false,
  });
  assert.ok(searched.type === "server-tool-result");
  assert.equal(searched.result.callId, id);
  assert.equal(searched.result.status, "completed");
  assert.deepEqual(searched.result.output, {
    kind: "search",
    query: SEARCH_QUERY,
    sources: [
      { url: FIRST_PAGE.url, title: FIRST_PAGE.title, snippet: "", pageAge: "2 days ago" },
      { url: SECOND_PAGE.url, title: SECOND_PAGE.title, snippet: "", pageAge: null },
    ],
  });
  assert.deepEqual(citedText, {
    type: "text",
    text: CITED_SENTENCE,
    citations: [
      {
        url: FIRST_PAGE.url,
        title: FIRST_PAGE.title,
        startIndex: 0,
        endIndex: CITED_SENTENCE.length,
        citedText: "Paris is the capital and largest city of France. ",
      },
    ],
  });
  assert.deepEqual(plainText, { type: "text", text: UNCITED_SENTENCE });

  // Each block rides verbatim (the streamed call with its whole input) for the rest of the turn.
  const message = anthropicSearchMessage() as { content: Array<Record<string, unknown>> };
  assert.ok(call.type === "server-tool-call");
  assert.deepEqual(JSON.parse(call.providerState!.nativeBlock!), message.content[0]);
  assert.deepEqual(JSON.parse(searched.providerState!.nativeBlock!), message.content[1]);
  assert.equal(call.providerState!.providerKind, "anthropic");
  assert.equal(call.providerState!.upstreamModel, "upstream-model-1");

  assert.deepEqual(withoutVolatile(fold(parts)), withoutVolatile(result.content));
  // The citation comes after the text it cites, before the block ends.
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("citation") > types.indexOf("text-delta"));
  assert.equal(types[types.indexOf("citation") + 1], "text-end");
});

test("without the tools sent natively, Anthropic's blocks are not mapped", async () => {
  upstream.enqueue(anthropicReply.sse(anthropicSearchEvents()));
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(callFor({ stream: true }))) parts.push(part);
  assert.deepEqual(
    fold(parts).map((item) => item.type),
    ["text", "text"],
  );
  assert.equal(
    parts.some((part) => part.type === "citation"),
    false,
  );
});

test("failed calls: Anthropic's error codes in the gateway's vocabulary; a fetched page's text", () => {
  const result = parseAnthropicResponse(
    {
      type: "message",
      content: [
        { type: "server_tool_use", id: "srvtoolu_a", name: "web_search", input: { query: "q" } },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_a",
          content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
        },
        {
          type: "server_tool_use",
          id: "srvtoolu_b",
          name: "web_fetch",
          input: { url: "https://a.example/x" },
        },
        {
          type: "web_fetch_tool_result",
          tool_use_id: "srvtoolu_b",
          content: { type: "web_fetch_tool_result_error", error_code: "url_not_in_prior_context" },
        },
        {
          type: "server_tool_use",
          id: "srvtoolu_c",
          name: "web_fetch",
          input: { url: "https://a.example/y" },
        },
        {
          type: "web_fetch_tool_result",
          tool_use_id: "srvtoolu_c",
          content: {
            type: "web_fetch_result",
            url: "https://a.example/y2",
            retrieved_at: "2026-01-01T00:00:00Z",
            content: {
              type: "document",
              title: "Y",
              source: { type: "text", media_type: "text/plain", data: "Déjà" },
            },
          },
        },
        { type: "server_tool_use", id: "srvtoolu_d", name: "code_execution", input: {} },
      ],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    },
    { upstreamModel: "m", nativeTools: new Set(["web_search", "web_fetch"]) },
  );
  const results = result.content.flatMap((item) => (item.type === "server-tool-result" ? [item.result] : []));
  assert.deepEqual(
    results.map((item) => [item.tool, item.status, item.error?.code]),
    [
      ["web_search", "failed", "max_uses_exceeded"],
      ["web_fetch", "failed", "url_not_allowed"],
      ["web_fetch", "completed", undefined],
    ],
  );
  assert.deepEqual(results[2].output, {
    kind: "fetch",
    url: "https://a.example/y",
    finalUrl: "https://a.example/y2",
    title: "Y",
    retrievedAt: "2026-01-01T00:00:00Z",
    contentType: "text/plain",
    bytes: 6,
    text: "Déjà",
    truncated: false,
  });
  assert.equal(
    result.content.filter((item) => item.type === "server-tool-call").length,
    3,
    "code_execution skipped",
  );
});

test("the provider's records go back verbatim to the model that made them, and nowhere else", () => {
  const block = {
    type: "server_tool_use",
    id: "srvtoolu_x",
    name: "web_search",
    input: { query: "q" },
    caller: { type: "direct" },
  };
  const messages: CanonicalRequest["messages"] = [
    { role: "user", content: [{ type: "text", text: "Search." }] },
    {
      role: "assistant",
      content: [
        {
          type: "native-tool",
          providerState: {
            providerKind: "anthropic",
            upstreamModel: "claude-a",
            nativeBlock: JSON.stringify(block),
          },
        },
        { type: "text", text: "Partial." },
      ],
    },
  ];
  assert.deepEqual(convertMessages(messages, { upstreamModel: "claude-a" })[1].content, [
    block,
    { type: "text", text: "Partial." },
  ]);
  assert.deepEqual(convertMessages(messages, { upstreamModel: "claude-b" })[1].content, [
    { type: "text", text: "Partial." },
  ]);
});

test("recorded: a thinking turn with two searches and cited text blocks", async () => {
  const body = readRecordedFixture("anthropic/messages/stream-thinking-web-search-citations.response.sse");
  const parts = await parseRecorded(body);
  const calls = parts.filter((part) => part.type === "server-tool-call");
  const results = parts.flatMap((part) => (part.type === "server-tool-result" ? [part.result] : []));
  assert.deepEqual(
    calls.map((part) => part.call.input),
    [{ query: "San Francisco weather today" }, { query: "San Francisco weather September 16 2025" }],
  );
  assert.deepEqual(
    results.map((result) => [
      result.status,
      result.output?.kind === "search" ? result.output.sources.length : -1,
    ]),
    [
      ["completed", 10],
      ["completed", 10],
    ],
  );
  assert.equal(parts.filter((part) => part.type === "citation").length, 7);
  assert.equal(parts.at(-1)?.type, "finish");
});

test("recorded: a turn Anthropic paused after ten searches ends with pause and an unanswered call", async () => {
  const body = readRecordedFixture("anthropic/messages/stream-pause-turn-web-search.response.sse");
  const parts = await parseRecorded(body);
  assert.equal(parts.filter((part) => part.type === "server-tool-call").length, 11);
  assert.equal(parts.filter((part) => part.type === "server-tool-result").length, 10);
  const finish = parts.at(-1);
  assert.ok(finish?.type === "finish");
  assert.equal(finish.reason, "pause");
});

async function parseRecorded(body: Buffer): Promise<CanonicalStreamPart[]> {
  async function* chunks() {
    yield body;
  }
  const parts: CanonicalStreamPart[] = [];
  const context = { upstreamModel: "claude", nativeTools: new Set(["web_search"] as const) };
  for await (const part of parseAnthropicStream(readSseEvents(chunks()), context)) parts.push(part);
  return parts;
}
