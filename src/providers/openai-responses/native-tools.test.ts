/**
 * OpenAI's own web search through the Responses adapter, against the loopback fake: the tool as
 * sent (options, the sources include, the call limit), `web_search_call` items as server-tool
 * calls with their results and `url_citation`s as citations (streamed and not alike), the item
 * sent back within the turn, and the recorded traffic.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  type FakeOpenAiUpstream,
  responsesReply,
  startFakeOpenAiResponsesUpstream,
} from "../../../test/helpers/fake-openai-responses-upstream.js";
import {
  FIRST_PAGE,
  OPENAI_ANSWER,
  OPENAI_SEARCH_ITEM_ID,
  openAiSearchEvents,
  openAiSearchResponse,
  readRecordedFixture,
  SEARCH_QUERY,
  SECOND_PAGE,
} from "../../../test/helpers/native-search-turns.js";
import type {
  CanonicalRequest,
  CanonicalStreamPart,
  NativeServerTool,
  ResultContent,
} from "../../canonical/index.js";
import type { UpstreamCall } from "../provider-adapter.js";
import { createUpstreamHttpClient } from "../shared/http-client.js";
import { createOpenAiResponsesAdapter } from "./adapter.js";
import { createResponsesStreamParser } from "./parse-stream.js";

let upstream: FakeOpenAiUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createOpenAiResponsesAdapter({ httpClient });

before(async () => {
  upstream = await startFakeOpenAiResponsesUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

const SEARCH: NativeServerTool = { tool: "web_search", maxUses: 5 };

function callFor(request: Partial<CanonicalRequest>): UpstreamCall {
  const call = createTestCall({ request, provider: { kind: "openai-responses", baseUrl: upstream.baseUrl } });
  call.upstreamModel = "gpt-5";
  return call;
}

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

test("web_search goes as OpenAI's own tool, with its sources asked for and the calls bounded", async () => {
  upstream.enqueue(responsesReply.json(openAiSearchResponse()));
  await adapter.generate(
    callFor({
      tools: [{ name: "lookup" }],
      nativeServerTools: [
        {
          tool: "web_search",
          maxUses: 3,
          allowedDomains: ["example.com"],
          searchContextSize: "low",
          userLocation: { country: "FR", timezone: "Europe/Paris" },
        },
      ],
    }),
  );
  const body = upstream.requests.at(-1)!.body;
  assert.deepEqual(body.tools, [
    { type: "function", name: "lookup", parameters: { type: "object", properties: {} }, strict: false },
    {
      type: "web_search",
      filters: { allowed_domains: ["example.com"] },
      search_context_size: "low",
      user_location: { type: "approximate", country: "FR", timezone: "Europe/Paris" },
    },
  ]);
  assert.deepEqual(body.include, ["web_search_call.action.sources"]);
  assert.equal(body.max_tool_calls, 3);

  upstream.enqueue(responsesReply.json(openAiSearchResponse()));
  await adapter.generate(callFor({}));
  const plain = upstream.requests.at(-1)!.body;
  assert.equal(plain.include, undefined, "no include without the native tool");
  assert.equal(plain.max_tool_calls, undefined);
});

test("a searched answer: the web_search_call item as a call and its result, the url_citation; streamed and not alike", async () => {
  upstream.enqueue(responsesReply.json(openAiSearchResponse()));
  const result = await adapter.generate(callFor({ nativeServerTools: [SEARCH] }));
  upstream.enqueue(responsesReply.sse(openAiSearchEvents()));
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(callFor({ nativeServerTools: [SEARCH], stream: true })))
    parts.push(part);

  const id = OPENAI_SEARCH_ITEM_ID.replace("ws_", "");
  const [call, searched, answer] = result.content;
  assert.equal(result.content.length, 3);
  assert.ok(call.type === "server-tool-call" && searched.type === "server-tool-result");
  assert.deepEqual(call.call, { id, tool: "web_search", input: { query: SEARCH_QUERY }, events: false });
  assert.deepEqual(
    JSON.parse(call.providerState!.nativeBlock!),
    (openAiSearchResponse().output as unknown[])[0],
  );
  assert.equal(searched.result.status, "completed");
  assert.deepEqual(searched.result.output, {
    kind: "search",
    query: SEARCH_QUERY,
    sources: [
      { url: FIRST_PAGE.url, title: "example.com", snippet: "", pageAge: null },
      { url: SECOND_PAGE.url, title: "example.org", snippet: "", pageAge: null },
    ],
  });
  assert.ok(answer.type === "text");
  assert.equal(answer.text, OPENAI_ANSWER);
  const citation = answer.citations?.[0];
  assert.equal(answer.citations?.length, 1);
  assert.equal(citation?.title, FIRST_PAGE.title);
  assert.equal(
    answer.text.slice(citation?.startIndex, citation?.endIndex),
    `([example.com](${FIRST_PAGE.url}))`,
  );

  assert.deepEqual(fold(parts), result.content);
  const types = parts.map((part) => part.type);
  assert.ok(types.indexOf("server-tool-result") < types.indexOf("text-start"), "the search before the text");
  assert.ok(
    types.lastIndexOf("text-delta") > types.indexOf("citation"),
    "cited as soon as the span is complete",
  );
});

test("a failed search and page reads: failed results, and web_fetch for open_page / find_in_page", async () => {
  const response = openAiSearchResponse();
  response.output = [
    { id: "ws_f1", type: "web_search_call", status: "failed", action: { type: "search", query: "q" } },
    {
      id: "ws_f2",
      type: "web_search_call",
      status: "completed",
      action: { type: "open_page", url: FIRST_PAGE.url },
    },
    {
      id: "ws_f3",
      type: "web_search_call",
      status: "completed",
      action: { type: "find_in_page", url: FIRST_PAGE.url, pattern: "Seine" },
    },
  ];
  upstream.enqueue(responsesReply.json(response));
  const result = await adapter.generate(callFor({ nativeServerTools: [SEARCH] }));
  const results = result.content.flatMap((item) => (item.type === "server-tool-result" ? [item.result] : []));
  assert.deepEqual(
    results.map((item) => [item.tool, item.status, item.input]),
    [
      ["web_search", "failed", { query: "q" }],
      ["web_fetch", "completed", { url: FIRST_PAGE.url }],
      ["web_fetch", "completed", { url: FIRST_PAGE.url, pattern: "Seine" }],
    ],
  );
  assert.equal(results[1].output?.kind === "fetch" && results[1].output.finalUrl, FIRST_PAGE.url);
});

test("the search item goes back within the turn, to this provider and model only, before what followed it", async () => {
  upstream.enqueue(responsesReply.json(openAiSearchResponse()));
  const item = (openAiSearchResponse().output as unknown[])[0];
  const state = (upstreamModel: string) => ({
    providerKind: "openai-responses",
    upstreamModel,
    nativeBlock: JSON.stringify(item),
  });
  const messages = (upstreamModel: string): CanonicalRequest["messages"] => [
    { role: "user", content: [{ type: "text", text: "Search." }] },
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "",
          providerState: {
            providerKind: "openai-responses",
            upstreamModel,
            encryptedContent: "enc",
            itemId: "rs_1",
          },
        },
        { type: "native-tool", providerState: state(upstreamModel) },
        { type: "tool-call", id: "call_1", name: "lookup", arguments: "{}" },
      ],
    },
    {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "call_1", content: [{ type: "text", text: "ok" }] }],
    },
  ];
  await adapter.generate(callFor({ messages: messages("gpt-5") }));
  assert.deepEqual(
    upstream.requests.at(-1)!.body.input.map((entry: { type: string }) => entry.type),
    ["message", "reasoning", "web_search_call", "function_call", "function_call_output"],
  );
  assert.deepEqual(upstream.requests.at(-1)!.body.input[2], item);

  upstream.enqueue(responsesReply.json(openAiSearchResponse()));
  await adapter.generate(callFor({ messages: messages("gpt-4.1") }));
  assert.deepEqual(
    upstream.requests.at(-1)!.body.input.map((entry: { type: string }) => entry.type),
    ["message", "function_call", "function_call_output"],
  );
});

test("recorded: six web_search_call items (searches and page reads) and twelve url_citations", () => {
  const body = readRecordedFixture("openai/responses/openai-web-search-tool.1.chunks.txt");
  const parser = createResponsesStreamParser({ upstreamModel: "gpt-5-mini", nativeSearch: true });
  const parts: CanonicalStreamPart[] = [];
  let text = "";
  for (const line of body.toString("utf8").split("\n")) {
    if (line.trim() === "") continue;
    for (const part of parser.acceptEvent(JSON.parse(line))) {
      parts.push(part);
      if (part.type === "text-delta") text += part.delta;
    }
  }
  const calls = parts.flatMap((part) => (part.type === "server-tool-call" ? [part.call.tool] : []));
  assert.deepEqual(calls, ["web_search", "web_search", "web_fetch", "web_fetch", "web_fetch", "web_fetch"]);
  const citations = parts.flatMap((part) => (part.type === "citation" ? [part.citation] : []));
  assert.equal(citations.length, 12);
  for (const citation of citations) {
    assert.ok(text.slice(citation.startIndex, citation.endIndex).includes(citation.url), citation.url);
  }
});
