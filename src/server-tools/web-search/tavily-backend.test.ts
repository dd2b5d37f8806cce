import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  buildTavilyResponse,
  expectSearchSuccess,
  type FakeSearchBackend,
  searchReply,
  startFakeSearchBackend,
} from "../../../test/helpers/fake-search-backend.js";
import { webSearchConfigSchema } from "../../config/server-tools/web-search-config.js";
import { createWebSearchBackends, type WebSearchBackends } from "./create-web-search-backends.js";
import { getTavilyCountryName } from "./tavily-backend.js";

const NOW = new Date("2026-03-10T12:00:00Z");
let fake: FakeSearchBackend;
let tools: WebSearchBackends;

before(async () => {
  fake = await startFakeSearchBackend();
  const config = webSearchConfigSchema.parse({
    backends: [
      {
        id: "tavily",
        kind: "tavily",
        base_url: fake.baseUrl,
        api_key_env: "TAVILY_API_KEY",
        price_per_call_usd: "0.008",
      },
      {
        id: "tavily-deep",
        kind: "tavily",
        base_url: fake.baseUrl,
        api_key_env: "TAVILY_API_KEY",
        search_depth: "advanced",
        price_per_call_usd: "0.016",
      },
    ],
  });
  tools = createWebSearchBackends(config, { TAVILY_API_KEY: "tvly-secret" }, { now: () => NOW });
});

after(async () => {
  await tools.close();
  await fake.close();
});

test("Tavily: POST /search with a Bearer key and exactly the documented body fields", async () => {
  const outcome = expectSearchSuccess(await tools.select("tavily")!.search({ query: "capital of france" }));
  const request = fake.requests.at(-1)!;
  assert.equal(request.method, "POST");
  assert.equal(request.pathname, "/search");
  assert.equal(request.headers.authorization, "Bearer tvly-secret");
  assert.equal(request.headers["content-type"], "application/json");
  assert.deepEqual(request.body, {
    query: "capital of france",
    max_results: 5,
    search_depth: "basic",
    topic: "general",
    include_answer: false,
    include_raw_content: false,
    include_images: false,
  });
  assert.equal(outcome.costMicroUsd, 8000);
});

test("Tavily: domains, country and count are sent natively; advanced depth sets chunks_per_source by context", async () => {
  expectSearchSuccess(
    await tools.select("tavily-deep")!.search({
      query: "news",
      count: 12,
      contextSize: "high",
      allowedDomains: ["lemonde.fr", "example.com/blog"],
      blockedDomains: ["spam.example"],
      userLocation: { country: "US", city: "Boston", region: "MA", timezone: "America/New_York" },
    }),
  );
  assert.deepEqual(fake.requests.at(-1)!.body, {
    query: "news",
    max_results: 10,
    search_depth: "advanced",
    chunks_per_source: 3,
    topic: "general",
    include_answer: false,
    include_raw_content: false,
    include_images: false,
    include_domains: ["lemonde.fr", "example.com/blog"],
    exclude_domains: ["spam.example"],
    country: "united states",
  });
  expectSearchSuccess(await tools.select("tavily-deep")!.search({ query: "news", contextSize: "low" }));
  assert.equal(fake.requests.at(-1)!.body.chunks_per_source, 1);
});

test("Tavily: country names follow Tavily's spelling; codes without a plain English name are left out", () => {
  assert.equal(getTavilyCountryName("GB"), "united kingdom");
  assert.equal(getTavilyCountryName("DE"), "germany");
  assert.equal(getTavilyCountryName("TR"), "turkey");
  assert.equal(getTavilyCountryName("BA"), "bosnia and herzegovina");
  assert.equal(getTavilyCountryName("CI"), undefined);
  assert.equal(getTavilyCountryName("XX"), undefined);
});

test("Tavily: results map content to the snippet and RFC 1123 published_date to an ISO date", async () => {
  fake.enqueue(
    searchReply.json(
      buildTavilyResponse("q", [
        {
          title: "Election results",
          url: "https://news.example/election",
          snippet: "Results are in.",
          date: "Mon, 09 Mar 2026 21:15:00 GMT",
        },
        { title: "Outside the allowed list", url: "https://elsewhere.example/", snippet: "x" },
      ]),
    ),
  );
  const outcome = expectSearchSuccess(
    await tools.select("tavily")!.search({ query: "q", allowedDomains: ["news.example"] }),
  );
  // Tavily filters domains itself; its answer is still checked against the list.
  assert.deepEqual(outcome.results, [
    {
      title: "Election results",
      url: "https://news.example/election",
      snippet: "Results are in.",
      date: "2026-03-09T21:15:00Z",
      pageAge: "2026-03-09T21:15:00Z",
    },
  ]);
});

test("Tavily: an error's detail.error explains the status; plan limits (432) are named", async () => {
  fake.enqueue(searchReply.status(401, { detail: { error: "Unauthorized: missing or invalid API key." } }));
  let outcome = await tools.select("tavily")!.search({ query: "q" });
  assert.ok(!outcome.ok);
  assert.equal(
    outcome.message,
    "Tavily answered HTTP 401: the API key was refused (Unauthorized: missing or invalid API key.)",
  );
  fake.enqueue(
    searchReply.status(432, { detail: { error: "This request exceeds your plan's set usage limit." } }),
  );
  outcome = await tools.select("tavily")!.search({ query: "q" });
  assert.ok(!outcome.ok);
  assert.equal(outcome.status, 432);
  assert.match(outcome.message, /usage limit is reached/);
});
