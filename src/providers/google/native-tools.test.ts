/**
 * Gemini's own Google Search and URL context through the adapter, against the loopback fake: the
 * tools as sent, grounding metadata as server-tool calls and results and its supports as
 * citations whose UTF-8 offsets became UTF-16 ones (streamed and not alike), URL context as page
 * reads, and the recorded traffic.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestCall } from "../../../test/helpers/adapter-inputs.js";
import {
  type FakeGoogleUpstream,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../../../test/helpers/fake-google-upstream.js";
import {
  GEMINI_ANSWER,
  GEMINI_CITED,
  GEMINI_SOURCES,
  geminiSearchChunks,
  geminiSearchResponse,
  readRecordedFixture,
  SEARCH_QUERY,
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
import { createGoogleAdapter } from "./adapter.js";
import { parseGenerateContentResponse } from "./parse-response.js";
import { parseGenerateContentStream } from "./parse-stream.js";

let upstream: FakeGoogleUpstream;
const httpClient = createUpstreamHttpClient();
const adapter = createGoogleAdapter({ httpClient });

before(async () => {
  upstream = await startFakeGoogleUpstream();
});

after(async () => {
  await httpClient.destroy();
  await upstream.close();
});

const SEARCH: NativeServerTool = { tool: "web_search", maxUses: 5 };

function callFor(request: Partial<CanonicalRequest>): UpstreamCall {
  const call = createTestCall({
    request,
    provider: { kind: "google", baseUrl: upstream.baseUrl, apiKey: "gemini-key" },
  });
  call.upstreamModel = "gemini-2.5-flash";
  return call;
}

/** Parts folded into content, with call ids made positional (Gemini's calls get fresh ones). */
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
    } else if (part.type === "server-tool-call") content.push({ type: "server-tool-call", call: part.call });
    else if (part.type === "server-tool-result")
      content.push({ type: "server-tool-result", result: part.result });
  }
  return content;
}

function withoutIds(content: ResultContent[]): unknown {
  return JSON.parse(
    JSON.stringify(content, (key, value) =>
      key === "id" || key === "callId" || key === "retrievedAt" ? "·" : value,
    ),
  );
}

test("web_search is googleSearch and web_fetch urlContext, beside the request's own tools entry", async () => {
  upstream.enqueue(fakeGoogleReply.json(geminiSearchResponse()));
  await adapter.generate(callFor({ nativeServerTools: [SEARCH, { tool: "web_fetch", maxUses: 2 }] }));
  assert.deepEqual(upstream.requests.at(-1)!.body.tools, [{ googleSearch: {} }, { urlContext: {} }]);
  upstream.enqueue(fakeGoogleReply.json(geminiSearchResponse()));
  await adapter.generate(callFor({}));
  assert.equal(upstream.requests.at(-1)!.body.tools, undefined);
});

test("a grounded answer: the query as a call, its pages as the result, supports as UTF-16 citations; streamed and not alike", async () => {
  upstream.enqueue(fakeGoogleReply.json(geminiSearchResponse()));
  const result = await adapter.generate(callFor({ nativeServerTools: [SEARCH] }));
  upstream.enqueue(fakeGoogleReply.sse(geminiSearchChunks()));
  const parts: CanonicalStreamPart[] = [];
  for await (const part of adapter.stream(callFor({ nativeServerTools: [SEARCH], stream: true })))
    parts.push(part);

  const [answer, call, searched] = result.content;
  assert.equal(result.content.length, 3);
  assert.ok(
    answer.type === "text" && call.type === "server-tool-call" && searched.type === "server-tool-result",
  );
  assert.equal(answer.text, GEMINI_ANSWER);
  const start = GEMINI_ANSWER.indexOf(GEMINI_CITED);
  assert.deepEqual(answer.citations, [
    { ...GEMINI_SOURCES[0], startIndex: start, endIndex: start + GEMINI_CITED.length, citedText: "" },
    { ...GEMINI_SOURCES[1], startIndex: start, endIndex: start + GEMINI_CITED.length, citedText: "" },
  ]);
  assert.deepEqual(call.call.input, { query: SEARCH_QUERY });
  assert.match(call.call.id, /^[A-Za-z0-9_]+$/);
  assert.equal(searched.result.callId, call.call.id);
  assert.deepEqual(searched.result.output, {
    kind: "search",
    query: SEARCH_QUERY,
    sources: GEMINI_SOURCES.map(({ url, title }) => ({ url, title, snippet: "", pageAge: null })),
  });
  assert.equal(call.providerState, undefined, "Gemini takes nothing back");

  assert.deepEqual(withoutIds(fold(parts)), withoutIds(result.content));
  const types = parts.map((part) => part.type);
  assert.deepEqual(types.slice(types.indexOf("citation") - 1, types.indexOf("citation") + 5), [
    "text-delta",
    "citation",
    "citation",
    "text-end",
    "server-tool-call",
    "server-tool-result",
  ]);
});

test("a segment given by its byte offsets alone lands on the same UTF-16 span", () => {
  const body = geminiSearchResponse() as {
    candidates: Array<{
      groundingMetadata: { groundingSupports: Array<{ segment: Record<string, unknown> }> };
    }>;
  };
  const segment = body.candidates[0].groundingMetadata.groundingSupports[0].segment;
  delete segment.text;
  assert.notEqual(
    segment.startIndex,
    GEMINI_ANSWER.indexOf(GEMINI_CITED),
    "the text has multi-byte characters before the span",
  );
  const result = parseGenerateContentResponse(body, {
    upstreamModel: "g",
    nativeTools: new Set(["web_search"]),
  });
  const answer = result.content[0];
  assert.ok(answer.type === "text");
  const citation = answer.citations?.[0];
  assert.equal(answer.text.slice(citation?.startIndex, citation?.endIndex), GEMINI_CITED);
});

test("URL context: each URL read is a web_fetch call, failed unless retrieved", () => {
  const body = geminiSearchResponse() as { candidates: Array<Record<string, unknown>> };
  body.candidates[0].groundingMetadata = {};
  body.candidates[0].urlContextMetadata = {
    urlMetadata: [
      { retrievedUrl: "https://a.example/ok", urlRetrievalStatus: "URL_RETRIEVAL_STATUS_SUCCESS" },
      { retrievedUrl: "https://a.example/paid", urlRetrievalStatus: "URL_RETRIEVAL_STATUS_PAYWALL" },
      { retrievedUrl: "https://a.example/bad", urlRetrievalStatus: "URL_RETRIEVAL_STATUS_UNSAFE" },
    ],
  };
  const result = parseGenerateContentResponse(body, {
    upstreamModel: "g",
    nativeTools: new Set(["web_fetch"]),
  });
  const results = result.content.flatMap((item) => (item.type === "server-tool-result" ? [item.result] : []));
  assert.deepEqual(
    results.map((item) => [item.tool, item.input.url, item.status, item.error?.code]),
    [
      ["web_fetch", "https://a.example/ok", "completed", undefined],
      ["web_fetch", "https://a.example/paid", "failed", "url_not_accessible"],
      ["web_fetch", "https://a.example/bad", "failed", "url_not_allowed"],
    ],
  );
  // Grounding metadata of a tool not sent natively is not read as searches.
  const searchOnly = parseGenerateContentResponse(geminiSearchResponse(), {
    upstreamModel: "g",
    nativeTools: new Set(["web_fetch"]),
  });
  assert.equal(
    searchOnly.content.some((item) => item.type === "server-tool-call"),
    false,
  );
});

test("recorded: a streamed google_search answer grounded on five pages, its supports cited", async () => {
  const body = readRecordedFixture("google/gemini/stream-google-search-grounding.response.sse");
  async function* chunks() {
    yield body!;
  }
  const parts: CanonicalStreamPart[] = [];
  let text = "";
  const context = { upstreamModel: "gemini-2.5-pro", nativeTools: new Set(["web_search"] as const) };
  for await (const part of parseGenerateContentStream(readSseEvents(chunks()), context)) {
    parts.push(part);
    if (part.type === "text-delta") text += part.delta;
  }
  const calls = parts.flatMap((part) => (part.type === "server-tool-call" ? [part.call.input] : []));
  assert.deepEqual(calls, [{ query: "weather in San Francisco today" }]);
  const results = parts.flatMap((part) => (part.type === "server-tool-result" ? [part.result] : []));
  assert.equal(results[0].output?.kind === "search" && results[0].output.sources.length, 5);
  const citations = parts.flatMap((part) => (part.type === "citation" ? [part.citation] : []));
  assert.equal(citations.length, 9);
  // The segment with "°" lands on its own text once the UTF-8 offsets are UTF-16 ones.
  assert.equal(
    text.slice(citations[0].startIndex, citations[0].endIndex),
    "As of Tuesday afternoon, the temperature is around 69°F (21°C), with a real feel of about 76°F (24°C) and humidity at approximately 68%.",
  );
});
