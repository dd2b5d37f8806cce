import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  buildBraveResponse,
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
      {
        id: "brave",
        kind: "brave",
        base_url: fake.baseUrl,
        api_key_env: "BRAVE_SEARCH_API_KEY",
        price_per_call_usd: "0.005",
      },
      {
        id: "brave-strict",
        kind: "brave",
        base_url: fake.baseUrl,
        api_key_env: "BRAVE_SEARCH_API_KEY",
        safesearch: "strict",
        price_per_call_usd: 0.005,
      },
    ],
  });
  tools = createWebSearchBackends(config, { BRAVE_SEARCH_API_KEY: "BSA-secret" }, { now: () => NOW });
});

after(async () => {
  await tools.close();
  await fake.close();
});

const brave = () => tools.select("brave")!;

test("Brave: GET /res/v1/web/search with the token header, count, web results only, no markup", async () => {
  const outcome = expectSearchSuccess(await brave().search({ query: "capital of france" }));
  const request = fake.requests.at(-1)!;
  assert.equal(request.method, "GET");
  assert.equal(request.pathname, "/res/v1/web/search");
  assert.deepEqual(request.query, {
    q: "capital of france",
    count: "5",
    result_filter: "web",
    text_decorations: "false",
  });
  assert.equal(request.headers["x-subscription-token"], "BSA-secret");
  assert.equal(request.headers.accept, "application/json");
  assert.equal(outcome.costMicroUsd, 5000);
  assert.equal(outcome.results.length, 3);
});

test("Brave: safesearch from the config", async () => {
  expectSearchSuccess(await tools.select("brave-strict")!.search({ query: "q" }));
  assert.equal(fake.requests.at(-1)!.query.safesearch, "strict");
});

test("Brave: description + extra snippets (high context), page_age as the date, age as the page's age", async () => {
  fake.enqueue(
    searchReply.json(
      buildBraveResponse("q", [
        {
          title: "Lyon weather",
          url: "https://weather.example/lyon",
          snippet: "Sunny <strong>today</strong>.",
          date: "2026-03-09T06:00:00",
          age: "1 day ago",
          extraSnippets: ["Wind 10 km/h.", "Tomorrow: rain."],
        },
        { title: "Old page", url: "https://old.example/", snippet: "Archive.", age: "March 3, 2024" },
      ]),
    ),
  );
  const outcome = expectSearchSuccess(await brave().search({ query: "q", contextSize: "high" }));
  assert.equal(fake.requests.at(-1)!.query.extra_snippets, "true");
  assert.equal(fake.requests.at(-1)!.query.count, "8");
  assert.deepEqual(outcome.results, [
    {
      title: "Lyon weather",
      url: "https://weather.example/lyon",
      snippet: "Sunny today. … Wind 10 km/h. … Tomorrow: rain.",
      date: "2026-03-09T06:00:00Z",
      pageAge: "1 day ago",
    },
    {
      title: "Old page",
      url: "https://old.example/",
      snippet: "Archive.",
      date: "2024-03-03",
      pageAge: "March 3, 2024",
    },
  ]);
});

test("Brave: low and medium context ask for no extra snippets", async () => {
  expectSearchSuccess(await brave().search({ query: "q", contextSize: "low" }));
  assert.equal(fake.requests.at(-1)!.query.extra_snippets, undefined);
  assert.equal(fake.requests.at(-1)!.query.count, "3");
});

test("Brave: an answer without a web section is zero results, not a failure", async () => {
  fake.enqueue(searchReply.json(buildBraveResponse("q", null)));
  const outcome = expectSearchSuccess(await brave().search({ query: "zzzxqj" }));
  assert.deepEqual(outcome.results, []);
});

test("Brave: a served country goes in `country`, others as ALL; the location travels in X-Loc-* headers", async () => {
  expectSearchSuccess(
    await brave().search({
      query: "weather",
      userLocation: { country: "CH", city: "Zürich", region: "ZH", timezone: "Europe/Zurich" },
    }),
  );
  let request = fake.requests.at(-1)!;
  assert.equal(request.query.country, "CH");
  assert.equal(request.headers["x-loc-country"], "CH");
  assert.equal(request.headers["x-loc-city"], "Zurich");
  assert.equal(request.headers["x-loc-state"], "ZH");
  assert.equal(request.headers["x-loc-state-name"], "ZH");
  assert.equal(request.headers["x-loc-timezone"], "Europe/Zurich");

  expectSearchSuccess(
    await brave().search({
      query: "weather",
      userLocation: { country: "VN", city: "Hà Nội", region: "北京" },
    }),
  );
  request = fake.requests.at(-1)!;
  assert.equal(request.query.country, "ALL");
  assert.equal(request.headers["x-loc-country"], "VN");
  assert.equal(request.headers["x-loc-city"], "Ha Noi");
  // Not expressible in ASCII: left out rather than mangled.
  assert.equal(request.headers["x-loc-state-name"], undefined);
  assert.equal(request.headers["x-loc-state"], undefined);
});

test("Brave: one allowed domain becomes site:, several are filtered afterwards from Brave's maximum of 20", async () => {
  expectSearchSuccess(await brave().search({ query: "q", allowedDomains: ["example.com"] }));
  assert.equal(fake.requests.at(-1)!.query.q, "q site:example.com");
  assert.equal(fake.requests.at(-1)!.query.count, "5");
  // No room for site: in a query at the length limit: filtered afterwards instead.
  const longQuery = "x".repeat(395);
  expectSearchSuccess(await brave().search({ query: longQuery, allowedDomains: ["example.com"] }));
  assert.equal(fake.requests.at(-1)!.query.q, longQuery);
  assert.equal(fake.requests.at(-1)!.query.count, "20");

  const hits = [
    { title: "a", url: "https://a.example.com/1", snippet: "a" },
    { title: "b", url: "https://b.org/2", snippet: "b" },
    { title: "c", url: "https://c.net/3", snippet: "c" },
  ];
  fake.enqueue(searchReply.json(buildBraveResponse("q", hits)));
  const outcome = expectSearchSuccess(
    await brave().search({ query: "q", allowedDomains: ["example.com", "c.net"] }),
  );
  assert.equal(fake.requests.at(-1)!.query.q, "q");
  assert.equal(fake.requests.at(-1)!.query.count, "20");
  assert.deepEqual(
    outcome.results.map((result) => result.url),
    ["https://a.example.com/1", "https://c.net/3"],
  );

  fake.enqueue(searchReply.json(buildBraveResponse("q", hits)));
  const blocked = expectSearchSuccess(
    await brave().search({ query: "q", count: 2, blockedDomains: ["b.org"] }),
  );
  assert.equal(fake.requests.at(-1)!.query.count, "20");
  assert.deepEqual(
    blocked.results.map((result) => result.url),
    ["https://a.example.com/1", "https://c.net/3"],
  );
});

test("Brave: 401 and 422 are explained from Brave's error body", async () => {
  const errorBody = (status: number, detail: string) => ({
    type: "ErrorResponse",
    error: {
      id: "e1",
      status,
      code: status === 401 ? "SUBSCRIPTION_TOKEN_INVALID" : "VALIDATION",
      detail,
      meta: {},
    },
    time: 1700000000,
  });
  fake.enqueue(searchReply.status(401, errorBody(401, "The provided subscription token is invalid.")));
  let outcome = await brave().search({ query: "q" });
  assert.ok(!outcome.ok);
  assert.equal(outcome.reason, "http_status");
  assert.equal(
    outcome.message,
    "Brave Search answered HTTP 401: the subscription token was refused (The provided subscription token is invalid.)",
  );
  assert.doesNotMatch(outcome.message, /BSA-secret/);

  fake.enqueue(searchReply.status(422, errorBody(422, "Unable to validate request parameter(s)")));
  outcome = await brave().search({ query: "q" });
  assert.ok(!outcome.ok);
  assert.equal(outcome.message, "Brave Search answered HTTP 422: Unable to validate request parameter(s)");
});

test("Brave: without its key the backend is not configured and sends nothing", async () => {
  const config = webSearchConfigSchema.parse({
    backends: [
      {
        id: "b",
        kind: "brave",
        base_url: fake.baseUrl,
        api_key_env: "NO_SUCH_KEY_VAR",
        price_per_call_usd: 1,
      },
    ],
  });
  const unconfigured = createWebSearchBackends(config, {});
  try {
    assert.equal(unconfigured.defaultBackend.configured, false);
    assert.deepEqual(unconfigured.missingConfiguration, [
      "b: environment variable NO_SUCH_KEY_VAR is not set",
    ]);
    const before = fake.requests.length;
    const outcome = await unconfigured.defaultBackend.search({ query: "q" });
    assert.ok(!outcome.ok);
    assert.equal(outcome.reason, "not_configured");
    assert.match(outcome.message, /NO_SUCH_KEY_VAR/);
    assert.equal(outcome.costMicroUsd, 0);
    assert.equal(fake.requests.length, before);
  } finally {
    await unconfigured.close();
  }
});
