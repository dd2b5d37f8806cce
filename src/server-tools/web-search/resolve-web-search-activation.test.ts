import assert from "node:assert/strict";
import { test } from "node:test";
import { buildSearchQuery, resolveWebSearchActivation } from "./resolve-web-search-activation.js";

test("every format's spelling of the options resolves to the same options", () => {
  // Chat Completions `web_search_options`.
  const chat = resolveWebSearchActivation(
    {
      search_context_size: "high",
      user_location: {
        type: "approximate",
        approximate: { city: "Lyon", country: "fr", timezone: "europe/paris" },
      },
    },
    10,
  );
  // Responses hosted tool and Anthropic's web_search tool put the location flat.
  const responses = resolveWebSearchActivation(
    {
      search_context_size: "high",
      user_location: {
        type: "approximate",
        city: "Lyon",
        country: "FR",
        timezone: "Europe/Paris",
        region: null,
      },
    },
    10,
  );
  const expected = {
    ok: true,
    options: { contextSize: "high", userLocation: { city: "Lyon", country: "FR", timezone: "Europe/Paris" } },
    ignored: [],
  };
  assert.deepEqual(chat, expected);
  assert.deepEqual(responses, expected);
});

test("domain filters from Responses `filters`, Anthropic and OpenRouter merge; max_results sets the count", () => {
  const resolved = resolveWebSearchActivation(
    {
      filters: { allowed_domains: ["https://Wikipedia.org/"], blocked_domains: null },
      allowed_domains: ["wikipedia.org", "arxiv.org"],
      blocked_domains: ["spam.example"],
      excluded_domains: ["junk.example"],
      max_results: 4,
      engine: "exa",
      search_prompt: "x",
    },
    10,
  );
  assert.deepEqual(resolved, {
    ok: true,
    options: {
      allowedDomains: ["wikipedia.org", "arxiv.org"],
      blockedDomains: ["spam.example", "junk.example"],
      count: 4,
    },
    ignored: ["engine", "search_prompt"],
  });
  assert.deepEqual(resolveWebSearchActivation(undefined, 10), { ok: true, options: {}, ignored: [] });
});

test("a malformed option names the parameter at fault", () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ search_context_size: "huge" }, "search_context_size"],
    [{ user_location: "Paris" }, "user_location"],
    [{ user_location: { type: "exact" } }, "user_location.type"],
    [{ user_location: { approximate: { country: "France" } } }, "user_location.approximate.country"],
    [{ user_location: { timezone: "Mars/Olympus" } }, "user_location.timezone"],
    [{ user_location: { city: 7 } }, "user_location.city"],
    [{ filters: ["a.com"] }, "filters"],
    [{ filters: { allowed_domains: ["not a domain"] } }, "filters.allowed_domains"],
    [{ blocked_domains: "localhost" }, "blocked_domains"],
    [{ allowed_domains: Array.from({ length: 101 }, (_, i) => `d${i}.com`) }, "allowed_domains"],
    [{ max_results: 0 }, "max_results"],
    [{ max_results: 11 }, "max_results"],
  ];
  for (const [parameters, param] of cases) {
    const resolved = resolveWebSearchActivation(parameters, 10);
    assert.equal(resolved.ok, false, JSON.stringify(parameters));
    assert.ok(!resolved.ok);
    assert.equal(resolved.param, param);
    assert.ok(resolved.message.length > 5);
  }
  const tooMany = resolveWebSearchActivation({ max_results: 11 }, 10);
  assert.ok(!tooMany.ok);
  assert.equal(tooMany.message, "must be at most 10 on this gateway");
});

test("the model narrows the caller's allowed domains but never widens them; blocked lists add up", () => {
  const options = {
    allowedDomains: ["example.com"],
    blockedDomains: ["ads.example.com"],
    contextSize: "low" as const,
  };
  assert.deepEqual(
    buildSearchQuery(options, {
      query: "q",
      allowedDomains: ["docs.example.com", "evil.net"],
      blockedDomains: ["x.org"],
    }),
    {
      query: "q",
      contextSize: "low",
      allowedDomains: ["docs.example.com"],
      blockedDomains: ["ads.example.com", "x.org"],
    },
  );
  assert.deepEqual(buildSearchQuery(options, { query: "q", allowedDomains: ["evil.net"] }).allowedDomains, [
    "example.com",
  ]);
  assert.deepEqual(buildSearchQuery({}, { query: "q", allowedDomains: ["evil.net"], count: 3 }), {
    query: "q",
    count: 3,
    allowedDomains: ["evil.net"],
  });
  assert.equal(buildSearchQuery({ count: 4 }, { query: "q" }).count, 4);
  assert.equal(buildSearchQuery({ count: 4 }, { query: "q", count: 2 }).count, 2);
});
