/**
 * The providers' own web search through a real gateway (embedded), with the official clients in
 * all three formats, streamed and not: each provider's native search (Anthropic `web_search`,
 * OpenAI Responses `web_search`, Gemini `googleSearch`) answered by its loopback fake in its
 * documented wire shapes, rendered as each format renders the gateway's own search (Messages
 * blocks and citations, Responses `web_search_call` items and `url_citation`s, Chat
 * annotations), billed at the catalog's price per call, with no gateway search backend
 * configured. An Anthropic turn paused with `pause_turn` is resumed by the gateway: the upstream
 * gets the paused turn back verbatim, the client one answer. The providers' recorded native-search
 * traffic goes through the same path.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { buildConfig } from "../../src/config/load-config.js";
import type { Settings } from "../../src/config/settings.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { anthropicReply, startFakeAnthropicUpstream } from "../helpers/fake-anthropic-upstream.js";
import { fakeGoogleReply, startFakeGoogleUpstream } from "../helpers/fake-google-upstream.js";
import {
  encodeResponseEvents,
  responsesReply,
  startFakeOpenAiResponsesUpstream,
} from "../helpers/fake-openai-responses-upstream.js";
import type { FakeOpenAiUpstream, FakeReply } from "../helpers/fake-openai-upstream.js";
import {
  ANTHROPIC_TOOL_USE_ID,
  anthropicPausedBlocks,
  anthropicPausedEvents,
  anthropicPausedMessage,
  anthropicResumedEvents,
  anthropicResumedMessage,
  anthropicSearchEvents,
  anthropicSearchMessage,
  CITED_SENTENCE,
  FIRST_PAGE,
  GEMINI_ANSWER,
  GEMINI_CITED,
  GEMINI_SOURCES,
  geminiSearchChunks,
  geminiSearchResponse,
  OPENAI_ANSWER,
  OPENAI_SEARCH_ITEM_ID,
  openAiSearchEvents,
  openAiSearchResponse,
  PAUSED_QUERY,
  PAUSED_TOOL_USE_ID,
  readRecordedFixture,
  SEARCH_QUERY,
  SECOND_PAGE,
  UNCITED_SENTENCE,
} from "../helpers/native-search-turns.js";

// biome-ignore lint/suspicious/noExplicitAny: the tests read wire fields the SDK types leave out.
type Json = any;

type Provider = "anthropic" | "openai" | "google";
type Format = "chat" | "responses" | "messages";

const PROVIDERS: readonly Provider[] = ["anthropic", "openai", "google"];
const FORMATS: readonly Format[] = ["chat", "responses", "messages"];

/** $2 / $8 per 1M tokens; one native search costs what the catalog says. */
const PRICES = { prompt: "2", completion: "8" };
const SEARCH_PRICE: Record<Provider, number> = { anthropic: 10_000, openai: 10_000, google: 14_000 };

/** What each provider's scripted answer says and costs (native-search-turns.ts). */
const EXPECTED: Record<
  Provider,
  { text: string; citedSpan: string; citedUrl: string; sources: string[]; tokensMicroUsd: number }
> = {
  anthropic: {
    text: CITED_SENTENCE + UNCITED_SENTENCE,
    citedSpan: CITED_SENTENCE,
    citedUrl: FIRST_PAGE.url,
    sources: [FIRST_PAGE.url, SECOND_PAGE.url],
    tokensMicroUsd: 2_000 * 2 + 60 * 8,
  },
  openai: {
    text: OPENAI_ANSWER,
    citedSpan: `([example.com](${FIRST_PAGE.url}))`,
    citedUrl: FIRST_PAGE.url,
    sources: [FIRST_PAGE.url, SECOND_PAGE.url],
    tokensMicroUsd: 2_500 * 2 + 80 * 8,
  },
  google: {
    text: GEMINI_ANSWER,
    citedSpan: GEMINI_CITED,
    citedUrl: GEMINI_SOURCES[0].url,
    sources: GEMINI_SOURCES.map((source) => source.url),
    // The prompt counts the tool's own prompt tokens (20 + 100).
    tokensMicroUsd: 120 * 2 + 30 * 8,
  },
};

let gateway: RunningGateway;
let fakes: Record<Provider, FakeOpenAiUpstream>;
let openai: OpenAI;
let anthropic: Anthropic;
let apiKey: string;

before(async () => {
  fakes = {
    anthropic: await startFakeAnthropicUpstream(),
    openai: await startFakeOpenAiResponsesUpstream(),
    google: await startFakeGoogleUpstream(),
  };
  const kinds: Record<Provider, string> = {
    anthropic: "anthropic",
    openai: "openai-responses",
    google: "google",
  };
  const upstreamModels: Record<Provider, string> = {
    anthropic: "claude-sonnet-4-5",
    openai: "gpt-5",
    google: "gemini-2.5-flash",
  };
  const config = buildConfig(
    {
      providers: PROVIDERS.map((provider) => ({
        id: provider,
        kind: kinds[provider],
        base_url: fakes[provider].baseUrl,
        api_key_env: "NATIVE_TEST_KEY",
        timeouts: { connect_ms: 2000, first_byte_ms: 5000, response_ms: 5000, idle_ms: 5000 },
      })),
      models: PROVIDERS.map((provider) => ({
        slug: `native/${provider}`,
        name: provider,
        provider: { slug: "native", name: "Native" },
        description: "",
        context_length: 200_000,
        max_output_tokens: 4_096,
        pricing: PRICES,
        features: ["tools", "streaming"],
        datacenter_locations: ["local"],
        native_server_tools: { web_search: { price_per_call_usd: SEARCH_PRICE[provider] / 1_000_000 } },
        routes: [{ provider, model: upstreamModels[provider] }],
      })),
      routing: { retries: 0, breaker_failures: 1000 },
      // No web_search backend: the providers search.
    },
    { NATIVE_TEST_KEY: "sk-upstream" },
  );
  const settings: Settings = {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: undefined,
    redisUrl: undefined,
    dataDir: IN_MEMORY_DATA_DIR,
    configPath: "(native tools)",
    internalSharedSecret: `native-${randomBytes(8).toString("hex")}`,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
  };
  gateway = await startGateway({
    settings,
    config,
    logger: createLogger(settings.logLevel),
    drainMs: 500,
    statePrefix: `native:${randomBytes(6).toString("hex")}:`,
  });
  const workspace = await gateway.admin.createWorkspace({ name: "native", creditsUsd: "100" });
  ({ secret: apiKey } = await gateway.admin.createKey({ workspaceId: workspace.id, name: "native" }));
  openai = new OpenAI({ apiKey, baseURL: `${gateway.url}/api/v1`, maxRetries: 0, timeout: 20_000 });
  anthropic = new Anthropic({ apiKey, baseURL: `${gateway.url}/api`, maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await gateway?.close();
  await Promise.all(Object.values(fakes ?? {}).map((fake) => fake.close()));
});

function searchReply(provider: Provider, stream: boolean): FakeReply {
  switch (provider) {
    case "anthropic":
      return stream
        ? anthropicReply.sse(anthropicSearchEvents(), { padding: true })
        : anthropicReply.json(anthropicSearchMessage());
    case "openai":
      return stream ? responsesReply.sse(openAiSearchEvents()) : responsesReply.json(openAiSearchResponse());
    case "google":
      return stream
        ? fakeGoogleReply.sse(geminiSearchChunks())
        : fakeGoogleReply.json(geminiSearchResponse());
  }
}

/** What a client saw, in one vocabulary for the three formats. */
interface Seen {
  id: string;
  text: string;
  /** Cited spans of `text` and their URLs. */
  citations: Array<{ span: string; url: string }>;
  /** The searches shown (Responses items, Messages blocks); Chat shows none. */
  searches: Array<{ id: string; query: string; sources: string[] }>;
  finish: string;
  raw: Json;
}

const QUESTION = "What is the capital of France?";

async function ask(format: Format, model: string, stream: boolean): Promise<Seen> {
  switch (format) {
    case "chat": {
      const params = {
        model,
        messages: [{ role: "user" as const, content: QUESTION }],
        plugins: [{ id: "web_search" }],
      };
      const completion: Json = stream
        ? await openai.chat.completions.stream(params).finalChatCompletion()
        : await openai.chat.completions.create(params);
      const message = completion.choices[0].message;
      const text: string = message.content ?? "";
      return {
        id: completion.id,
        text,
        citations: (message.annotations ?? []).map((annotation: Json) => ({
          span: text.slice(annotation.url_citation.start_index, annotation.url_citation.end_index),
          url: annotation.url_citation.url,
        })),
        searches: [],
        finish: completion.choices[0].finish_reason,
        raw: completion,
      };
    }
    case "responses": {
      const params = { model, input: QUESTION, tools: [{ type: "web_search" as const }] };
      const response: Json = stream
        ? await openai.responses.stream(params).finalResponse()
        : await openai.responses.create(params);
      const parts = response.output
        .filter((item: Json) => item.type === "message")
        .flatMap((item: Json) => item.content);
      let text = "";
      const citations: Seen["citations"] = [];
      for (const part of parts) {
        for (const annotation of part.annotations ?? []) {
          citations.push({
            span: part.text.slice(annotation.start_index, annotation.end_index),
            url: annotation.url,
          });
        }
        text += part.text;
      }
      return {
        id: response.id,
        text,
        citations,
        searches: response.output
          .filter((item: Json) => item.type === "web_search_call")
          .map((item: Json) => ({
            id: item.id,
            query: item.action?.query,
            sources: (item.action?.sources ?? []).map((source: Json) => source.url),
          })),
        finish: response.status,
        raw: response,
      };
    }
    case "messages": {
      const params = {
        model,
        max_tokens: 1_024,
        messages: [{ role: "user" as const, content: QUESTION }],
        tools: [{ type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 3 }],
      };
      const message: Json = stream
        ? await anthropic.messages.stream(params).finalMessage()
        : await anthropic.messages.create(params);
      const texts = message.content.filter((block: Json) => block.type === "text");
      const inputs = new Map<string, string>(
        message.content
          .filter((block: Json) => block.type === "server_tool_use")
          .map((block: Json) => [block.id, block.input.query]),
      );
      return {
        id: message.id,
        text: texts.map((block: Json) => block.text).join(""),
        citations: texts.flatMap((block: Json) =>
          (block.citations ?? []).map((citation: Json) => ({ span: block.text, url: citation.url })),
        ),
        searches: message.content
          .filter((block: Json) => block.type === "web_search_tool_result")
          .map((block: Json) => ({
            id: block.tool_use_id,
            query: inputs.get(block.tool_use_id) ?? "",
            sources: Array.isArray(block.content) ? block.content.map((result: Json) => result.url) : [],
          })),
        finish: message.stop_reason,
        raw: message,
      };
    }
  }
}

/** The generation record, once settled (a stream's settles just after its last frame). */
async function readRecord(id: string): Promise<Json> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${gateway.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body: Json = await response.json();
    if (response.status === 200 && body.data?.status !== "in_progress") return body.data;
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  throw new Error(`record ${id} did not settle`);
}

const FINISHED: Record<Format, string> = { chat: "stop", responses: "completed", messages: "end_turn" };

for (const provider of PROVIDERS) {
  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      test(`${provider}'s own search in ${format}${stream ? ", streamed" : ""}: shown as the format shows a search, billed at the catalog's price`, async () => {
        const fake = fakes[provider];
        const sent = fake.requests.length;
        fake.enqueue(searchReply(provider, stream));
        const seen = await ask(format, `native/${provider}`, stream);
        const expected = EXPECTED[provider];

        assert.equal(seen.text, expected.text);
        const urls = [expected.citedUrl, ...(provider === "google" ? [GEMINI_SOURCES[1].url] : [])];
        assert.deepEqual(
          seen.citations.map((citation) => citation.url),
          urls,
        );
        for (const citation of seen.citations) {
          // Messages cites whole blocks (its citations have no offsets): the cited span is in the block.
          if (format === "messages") assert.ok(citation.span.includes(expected.citedSpan), citation.span);
          else assert.equal(citation.span, expected.citedSpan);
        }
        assert.equal(seen.finish, FINISHED[format]);
        if (format === "chat") {
          assert.equal(seen.raw.choices[0].message.tool_calls, undefined, "no search shown as a client call");
        } else {
          assert.equal(seen.searches.length, 1);
          assert.equal(seen.searches[0].query, SEARCH_QUERY);
          assert.deepEqual(seen.searches[0].sources, expected.sources);
        }
        if (format === "messages") {
          assert.equal(seen.raw.usage.server_tool_use.web_search_requests, 1);
          const use = seen.raw.content.find((block: Json) => block.type === "server_tool_use");
          assert.equal(use.name, "web_search");
          assert.match(use.id, /^srvtoolu_/);
          // Anthropic's own call keeps Anthropic's id; OpenAI's item id shows through its own.
          if (provider === "anthropic") assert.equal(use.id, ANTHROPIC_TOOL_USE_ID);
          if (provider === "openai") assert.equal(use.id, OPENAI_SEARCH_ITEM_ID.replace("ws_", "srvtoolu_"));
          // The provider's records stay in the gateway: the caller's copies are the gateway's own.
          const result = seen.raw.content.find((block: Json) => block.type === "web_search_tool_result");
          assert.doesNotMatch(JSON.stringify(result), /EqwBCioIBxgC/);
        }
        if (format === "responses") {
          const item = seen.raw.output.find((entry: Json) => entry.type === "web_search_call");
          assert.equal(item.status, "completed");
          if (provider === "openai") assert.ok(item.id.startsWith(OPENAI_SEARCH_ITEM_ID));
        }

        // Upstream: the provider's own tool, no function definition of the gateway's.
        assert.equal(fake.requests.length, sent + 1);
        const body: Json = fake.requests.at(-1)!.body;
        if (provider === "anthropic") {
          assert.deepEqual(body.tools, [
            { type: "web_search_20250305", name: "web_search", max_uses: format === "messages" ? 3 : 5 },
          ]);
        } else if (provider === "openai") {
          assert.deepEqual(body.tools, [{ type: "web_search" }]);
          assert.ok(body.include.includes("web_search_call.action.sources"));
          assert.equal(body.max_tool_calls, format === "messages" ? 3 : 5);
        } else {
          assert.deepEqual(body.tools, [{ googleSearch: {} }]);
        }

        const record = await readRecord(seen.id);
        assert.equal(record.status, "ok");
        assert.deepEqual(record.tool_costs_micro_usd, { web_search: String(SEARCH_PRICE[provider]) });
        assert.equal(record.cost_micro_usd, String(expected.tokensMicroUsd + SEARCH_PRICE[provider]));
        if (format === "chat") {
          assert.equal(seen.raw.usage.cost, (expected.tokensMicroUsd + SEARCH_PRICE[provider]) / 1_000_000);
        }
      });
    }
  }
}

for (const format of FORMATS) {
  for (const stream of [false, true]) {
    test(`Anthropic's paused turn, ${format}${stream ? ", streamed" : ""}: the gateway resumes it with the turn sent back verbatim; one answer`, async () => {
      const fake = fakes.anthropic;
      const sent = fake.requests.length;
      fake.enqueue(
        stream ? anthropicReply.sse(anthropicPausedEvents()) : anthropicReply.json(anthropicPausedMessage()),
        stream
          ? anthropicReply.sse(anthropicResumedEvents())
          : anthropicReply.json(anthropicResumedMessage()),
      );
      const seen = await ask(format, "native/anthropic", stream);
      assert.equal(fake.requests.length, sent + 2, "one more upstream call, no more");
      const resumed: Json = fake.requests.at(-1)!.body;
      const last = resumed.messages.at(-1);
      assert.equal(last.role, "assistant", "the paused turn is the last message");
      assert.deepEqual(last.content, anthropicPausedBlocks());
      assert.deepEqual(resumed.messages.slice(0, -1), fake.requests.at(-2)!.body.messages);
      // Two calls made, one of them still to run: the Messages activation's max_uses 3 leaves it 2.
      assert.deepEqual(resumed.tools, [
        { type: "web_search_20250305", name: "web_search", max_uses: format === "messages" ? 2 : 5 },
      ]);

      assert.equal(seen.text, `Let me check one more thing.${CITED_SENTENCE}`);
      assert.equal(seen.finish, FINISHED[format]);
      if (format !== "chat") {
        assert.deepEqual(
          seen.searches.map((search) => search.query),
          [SEARCH_QUERY, PAUSED_QUERY],
        );
      }
      if (format === "messages") {
        assert.deepEqual(
          seen.raw.content.map((block: Json) => block.type),
          [
            "server_tool_use",
            "web_search_tool_result",
            "text",
            "server_tool_use",
            "web_search_tool_result",
            "text",
          ],
        );
        assert.equal(seen.raw.content[4].tool_use_id, PAUSED_TOOL_USE_ID);
        assert.equal(seen.raw.usage.server_tool_use.web_search_requests, 2);
      }
      const record = await readRecord(seen.id);
      // Both rounds' tokens ($2 / $8 per 1M) and both searches.
      const tokens = (3_000 + 4_000) * 2 + (40 + 30) * 8;
      assert.equal(record.cost_micro_usd, String(tokens + 2 * SEARCH_PRICE.anthropic));
      assert.equal(record.tokens_prompt, 7_000);
      assert.equal(record.finish_reason, "stop");
    });
  }
}

test("an activation that asks for the gateway's own search is refused on this gateway, which has no backend", async () => {
  // `plugins` is a gateway extension the SDK's types lack; a variable passes it along.
  const params = {
    model: "native/anthropic",
    messages: [{ role: "user" as const, content: QUESTION }],
    plugins: [{ id: "web_search", engine: "gateway" }],
  };
  await assert.rejects(
    openai.chat.completions.create(params),
    (error: Json) =>
      error.status === 400 && error.param === "plugins[0]" && /not configured/.test(error.message),
  );
});

test("hi.tool_event frames report the provider's own call, its input, its price and its sources", async () => {
  fakes.anthropic.enqueue(anthropicReply.sse(anthropicSearchEvents()));
  const params = {
    model: "native/anthropic",
    messages: [{ role: "user" as const, content: QUESTION }],
    plugins: [{ id: "web_search" }],
    hi_tool_events: true,
    stream: true as const,
  };
  const events: Json[] = [];
  for await (const chunk of await openai.chat.completions.create(params)) {
    const event = (chunk as Json).hi_tool_event;
    if (event !== undefined) events.push(event);
  }
  assert.deepEqual(
    events.map((event) => [event.tool, event.phase, event.call_id]),
    [
      ["web_search", "started", ANTHROPIC_TOOL_USE_ID.replace("srvtoolu_", "")],
      ["web_search", "completed", ANTHROPIC_TOOL_USE_ID.replace("srvtoolu_", "")],
    ],
  );
  assert.deepEqual(events[1].input, { query: SEARCH_QUERY });
  assert.equal(events[1].cost_micro_usd, SEARCH_PRICE.anthropic);
  assert.deepEqual(events[1].output, { result_count: 2, urls: [FIRST_PAGE.url, SECOND_PAGE.url] });
});

// ---------------------------------------------------------------- recorded traffic

/** A `.chunks.txt` recording (one event's JSON per line) framed as the SSE the API sends. */
function frameChunks(body: Buffer): string {
  return encodeResponseEvents(
    body
      .toString("utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line)),
  );
}

const RECORDED: Array<{
  provider: Provider;
  file: string;
  reply: (body: Buffer) => FakeReply;
  /** Items in Responses, server_tool_use blocks in Messages. */
  searches: number;
  /** Calls billed at the search price (page reads have none). */
  paid: number;
}> = [
  {
    provider: "anthropic",
    file: "anthropic/messages/stream-thinking-web-search-citations.response.sse",
    reply: (body) => anthropicReply.raw(body),
    searches: 2,
    paid: 2,
  },
  {
    provider: "openai",
    file: "openai/responses/openai-web-search-tool.1.chunks.txt",
    reply: (body) => ({ kind: "raw", body: frameChunks(body) }),
    searches: 6,
    paid: 2,
  },
  {
    provider: "google",
    file: "google/gemini/stream-google-search-grounding.response.sse",
    reply: (body) => fakeGoogleReply.raw(body),
    searches: 1,
    paid: 1,
  },
];

for (const recording of RECORDED) {
  for (const format of FORMATS) {
    test(`recorded ${recording.provider} native search, ${format}, streamed: every client reads it`, async () => {
      const body = readRecordedFixture(recording.file);
      fakes[recording.provider].enqueue(recording.reply(body));
      const seen = await ask(format, `native/${recording.provider}`, true);
      assert.ok(seen.text.length > 100);
      assert.ok(seen.citations.length > 0, "the provider's citations are shown");
      for (const citation of seen.citations) assert.ok(citation.span.length > 0);
      if (format === "responses") assert.equal(seen.searches.length, recording.searches);
      if (format === "messages") {
        // Each search and each page read (OpenAI's open_page, a web_fetch) is a server_tool_use.
        const uses = seen.raw.content.filter((block: Json) => block.type === "server_tool_use");
        assert.equal(uses.length, recording.searches);
      }
      const record = await readRecord(seen.id);
      assert.equal(record.status, "ok");
      assert.deepEqual(record.tool_costs_micro_usd, {
        web_search: String(recording.paid * SEARCH_PRICE[recording.provider]),
      });
    });
  }
}

for (const format of FORMATS) {
  test(`recorded OpenAI native search, non-streamed body, ${format}: every client reads it`, async () => {
    const body = readRecordedFixture("openai/responses/openai-web-search-tool.1.json");
    fakes.openai.enqueue(responsesReply.json(JSON.parse(body.toString("utf8"))));
    const seen = await ask(format, "native/openai", false);
    assert.ok(seen.citations.length >= 10, `${seen.citations.length} citations`);
    for (const citation of seen.citations) assert.ok(citation.span.includes(citation.url.split("?")[0]));
    // Three web_search_call items: a search, an open_page and a find_in_page.
    if (format === "responses") assert.equal(seen.searches.length, 3);
    if (format === "messages") {
      assert.deepEqual(
        seen.raw.content
          .filter((block: Json) => block.type === "server_tool_use")
          .map((block: Json) => block.name),
        ["web_search", "web_fetch", "web_fetch"],
      );
    }
    const record = await readRecord(seen.id);
    assert.deepEqual(record.tool_costs_micro_usd, { web_search: String(SEARCH_PRICE.openai) });
  });
}

test("recorded pause_turn after ten searches: resumed with the recorded blocks sent back, encrypted content and all", async () => {
  const body = readRecordedFixture("anthropic/messages/stream-pause-turn-web-search.response.sse");
  const fake = fakes.anthropic;
  fake.enqueue(anthropicReply.raw(body), anthropicReply.sse(anthropicResumedEvents()));
  const message: Json = await anthropic.messages
    .stream({
      model: "native/anthropic",
      max_tokens: 15_000,
      messages: [{ role: "user", content: "Run ten searches." }],
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 20 }],
    })
    .finalMessage();
  const resumed: Json = fake.requests.at(-1)!.body;
  const blocks = resumed.messages.at(-1).content;
  assert.equal(blocks.filter((block: Json) => block.type === "server_tool_use").length, 11);
  const results = blocks.filter((block: Json) => block.type === "web_search_tool_result");
  assert.equal(results.length, 10);
  // The recording's own encrypted results go back as they came.
  const recorded = body.toString("utf8");
  for (const result of results) {
    for (const item of result.content) assert.ok(recorded.includes(item.encrypted_content));
  }
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.content.filter((block: Json) => block.type === "web_search_tool_result").length, 11);
});
