import assert from "node:assert/strict";
import { test } from "node:test";
import { renderSearchOutcomeForModel } from "./render-search-outcome.js";
import type { SearchFailure, SearchSuccess } from "./search-types.js";

const success = (count: number): SearchSuccess => ({
  ok: true,
  backend: "brave",
  query: "paris",
  results: Array.from({ length: count }, (_, index) => ({
    title: `Result ${index + 1}`,
    url: `https://example.com/${index + 1}`,
    snippet: "s".repeat(400),
    date: index === 0 ? "2026-03-08" : null,
    pageAge: null,
  })),
  costMicroUsd: 5000,
  durationMs: 12,
});

test("results are numbered with title, URL, date and snippet", () => {
  const text = renderSearchOutcomeForModel(success(2), 10_000);
  assert.equal(
    text,
    `Web search results for "paris":\n\n[1] Result 1\nURL: https://example.com/1\nDate: 2026-03-08\n${"s".repeat(400)}` +
      `\n\n[2] Result 2\nURL: https://example.com/2\n${"s".repeat(400)}`,
  );
});

test("the text stays within its budget and says how many results were left out", () => {
  const text = renderSearchOutcomeForModel(success(10), 1500);
  assert.ok(text.length <= 1500 + 80, `${text.length}`);
  assert.match(text, /\[3\] Result 3/);
  assert.doesNotMatch(text, /\[4\]/);
  assert.match(text, /\(7 more results left out to keep this short\.\)$/);
  assert.equal(renderSearchOutcomeForModel(success(0), 1500), 'The web search for "paris" found no results.');
});

test("a failure tells the model what happened without the gateway's configuration", () => {
  const failure = (reason: SearchFailure["reason"], message: string, status?: number): SearchFailure => ({
    ok: false,
    backend: "brave",
    query: "paris",
    reason,
    message,
    status,
    costMicroUsd: 0,
    durationMs: 1,
  });
  assert.equal(
    renderSearchOutcomeForModel(failure("not_configured", "… BRAVE_SEARCH_API_KEY is not set."), 1000),
    'The web search for "paris" failed: web search is not configured on this gateway. No results are available from this search.',
  );
  assert.equal(
    renderSearchOutcomeForModel(
      failure("http_status", "Brave Search answered HTTP 429: rate limit reached.", 429),
      1000,
    ),
    'The web search for "paris" failed: the search service answered HTTP 429 (too many requests). No results are available from this search.',
  );
  assert.match(renderSearchOutcomeForModel(failure("timeout", "x"), 1000), /did not answer in time/);
  assert.equal(
    renderSearchOutcomeForModel(failure("invalid_input", "The search query is empty."), 1000),
    'The web search for "paris" failed: The search query is empty. Nothing was searched.',
  );
});
