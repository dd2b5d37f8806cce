import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  buildSearxngResponse,
  expectSearchSuccess,
  type FakeSearchBackend,
  searchReply,
  startFakeSearchBackend,
} from "../../../test/helpers/fake-search-backend.js";
import { webSearchConfigSchema } from "../../config/server-tools/web-search-config.js";
import { createWebSearchBackends, type WebSearchBackends } from "./create-web-search-backends.js";

const NOW = new Date("2026-03-10T12:00:00Z");
let fake: FakeSearchBackend;
let tools: WebSearchBackends;

before(async () => {
  fake = await startFakeSearchBackend();
  const config = webSearchConfigSchema.parse({
    backends: [
      { id: "searx", kind: "searxng", base_url: fake.baseUrl, price_per_call_usd: 0 },
      {
        id: "searx-auth",
        kind: "searxng",
        // A path prefix (instance served under /searxng) is kept.
        base_url: `${fake.baseUrl}/searxng/`,
        api_key_env: "SEARX_TOKEN",
        auth_header: "X-Api-Key",
        categories: ["general", "news"],
        language: "fr-FR",
        safesearch: 1,
        price_per_call_usd: "0.0005",
      },
    ],
  });
  tools = createWebSearchBackends(config, { SEARX_TOKEN: "tok-123" }, { now: () => NOW });
});

after(async () => {
  await tools.close();
  await fake.close();
});

test("SearXNG: GET /search with q, format=json, pageno, categories; no auth header unless configured", async () => {
  const outcome = expectSearchSuccess(
    await tools.select("searx")!.search({ query: "  capital  of france " }),
  );
  const request = fake.requests.at(-1)!;
  assert.equal(request.method, "GET");
  assert.equal(request.pathname, "/search");
  assert.deepEqual(request.query, {
    q: "capital of france",
    format: "json",
    pageno: "1",
    categories: "general",
  });
  assert.equal(request.headers.accept, "application/json");
  assert.equal(request.headers.authorization, undefined);
  assert.equal(outcome.query, "capital of france");
  assert.equal(outcome.costMicroUsd, 0);
});

test("SearXNG: configured categories, language, safesearch, path prefix and the key in the auth header", async () => {
  expectSearchSuccess(await tools.select("searx-auth")!.search({ query: "météo" }));
  const request = fake.requests.at(-1)!;
  assert.equal(request.pathname, "/searxng/search");
  assert.deepEqual(request.query, {
    q: "météo",
    format: "json",
    pageno: "1",
    categories: "general,news",
    language: "fr-FR",
    safesearch: "1",
  });
  assert.equal(request.headers["x-api-key"], "tok-123");
  assert.equal(tools.select("searx-auth")!.pricePerCallMicroUsd, 500);
});

test("SearXNG: results become title, url, plain snippet and a normalised date, in score order", async () => {
  fake.enqueue(
    searchReply.json(
      buildSearxngResponse("q", [
        {
          title: "Paris &amp; <b>France</b>",
          url: "https://example.org/paris",
          snippet: "Paris  is\nthe <em>capital</em>.",
          date: "2026-03-08T09:30:00",
        },
        { title: "", url: "https://example.net/a", snippet: "No title here.", date: null },
        { title: "Not http", url: "javascript:alert(1)", snippet: "dropped" },
        { title: "Duplicate", url: "https://example.org/paris", snippet: "dropped too" },
        { title: "Zoned", url: "https://example.com/z", snippet: "z", date: "2026-03-01T23:30:00-02:00" },
      ]),
    ),
  );
  const outcome = expectSearchSuccess(await tools.select("searx")!.search({ query: "q" }));
  assert.deepEqual(outcome.results, [
    {
      title: "Paris & France",
      url: "https://example.org/paris",
      snippet: "Paris is the capital.",
      date: "2026-03-08T09:30:00Z",
      pageAge: "2026-03-08T09:30:00Z",
    },
    {
      title: "example.net",
      url: "https://example.net/a",
      snippet: "No title here.",
      date: null,
      pageAge: null,
    },
    {
      title: "Zoned",
      url: "https://example.com/z",
      snippet: "z",
      date: "2026-03-02T01:30:00Z",
      pageAge: "2026-03-02T01:30:00Z",
    },
  ]);
});

test("SearXNG: count and context size are applied to the page of results it returns", async () => {
  const hits = Array.from({ length: 12 }, (_, index) => ({
    title: `Result ${index}`,
    url: `https://site${index}.example/page`,
    snippet: "word ".repeat(400),
  }));
  fake.enqueue(searchReply.json(buildSearxngResponse("q", hits)));
  const low = expectSearchSuccess(await tools.select("searx")!.search({ query: "q", contextSize: "low" }));
  assert.equal(low.results.length, 3);
  assert.ok(low.results[0].snippet.length <= 240 && low.results[0].snippet.endsWith("…"));

  fake.enqueue(searchReply.json(buildSearxngResponse("q", hits)));
  const high = expectSearchSuccess(
    await tools.select("searx")!.search({ query: "q", contextSize: "high", count: 7 }),
  );
  assert.equal(high.results.length, 7);
  assert.ok(high.results[0].snippet.length > 900 && high.results[0].snippet.length <= 1000);
  // No count, location or time parameters exist in SearXNG's API: none is sent.
  assert.deepEqual(Object.keys(fake.requests.at(-1)!.query).sort(), ["categories", "format", "pageno", "q"]);
});

test("SearXNG: one allowed domain goes into the query as site:, and every filter is applied to the results", async () => {
  const hits = [
    { title: "a", url: "https://docs.example.com/x", snippet: "a" },
    { title: "b", url: "https://other.org/y", snippet: "b" },
    { title: "c", url: "https://example.com.evil.net/z", snippet: "c" },
    { title: "d", url: "https://example.com/blog/post", snippet: "d" },
  ];
  fake.enqueue(searchReply.json(buildSearxngResponse("q", hits)));
  const single = expectSearchSuccess(
    await tools
      .select("searx")!
      .search({ query: "q", allowedDomains: ["example.com"], userLocation: { country: "FR" } }),
  );
  assert.equal(fake.requests.at(-1)!.query.q, "q site:example.com");
  assert.equal(fake.requests.at(-1)!.query.country, undefined);
  assert.deepEqual(
    single.results.map((result) => result.url),
    ["https://docs.example.com/x", "https://example.com/blog/post"],
  );

  fake.enqueue(searchReply.json(buildSearxngResponse("q", hits)));
  const filtered = expectSearchSuccess(
    await tools.select("searx")!.search({ query: "q", blockedDomains: ["docs.example.com", "other.org"] }),
  );
  assert.equal(fake.requests.at(-1)!.query.q, "q");
  assert.deepEqual(
    filtered.results.map((result) => result.url),
    ["https://example.com.evil.net/z", "https://example.com/blog/post"],
  );

  fake.enqueue(searchReply.json(buildSearxngResponse("q", hits)));
  const withPath = expectSearchSuccess(
    await tools.select("searx")!.search({ query: "q", allowedDomains: ["example.com/blog"] }),
  );
  assert.deepEqual(
    withPath.results.map((result) => result.url),
    ["https://example.com/blog/post"],
  );
});

test("SearXNG: 403 (JSON output disabled) is a typed failure that says how to fix it", async () => {
  fake.enqueue(searchReply.status(403, "<html>Forbidden</html>"));
  const outcome = await tools.select("searx")!.search({ query: "q" });
  assert.equal(outcome.ok, false);
  assert.ok(!outcome.ok);
  assert.equal(outcome.reason, "http_status");
  assert.equal(outcome.status, 403);
  assert.match(outcome.message, /search\.formats/);
  assert.equal(outcome.costMicroUsd, 0);
});

test("SearXNG: its JSON error body explains a 500", async () => {
  fake.enqueue(searchReply.status(500, { error: "search error" }));
  const outcome = await tools.select("searx")!.search({ query: "q" });
  assert.ok(!outcome.ok);
  assert.equal(outcome.message, "SearXNG answered HTTP 500: search error");
});
