import assert from "node:assert/strict";
import { test } from "node:test";
import { createWebSearchBackends } from "../../server-tools/web-search/create-web-search-backends.js";
import { webSearchConfigSchema } from "./web-search-config.js";

function issuesOf(raw: unknown): string[] {
  const parsed = webSearchConfigSchema.safeParse(raw);
  assert.equal(parsed.success, false, "expected the config to be refused");
  return parsed.error!.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

test("defaults: production base URLs, 5 s deadline, 1 MiB cap, 10 results, first backend is the default", () => {
  const config = webSearchConfigSchema.parse({
    backends: [
      { id: "brave", kind: "brave", api_key_env: "BRAVE_SEARCH_API_KEY", price_per_call_usd: "0.005" },
      { id: "tavily", kind: "tavily", api_key_env: "TAVILY_API_KEY", price_per_call_usd: "0.008" },
      { id: "searx", kind: "searxng", base_url: "http://searxng:8080", price_per_call_usd: 0 },
    ],
  });
  assert.deepEqual(config.backends[0], {
    id: "brave",
    kind: "brave",
    base_url: "https://api.search.brave.com",
    api_key_env: "BRAVE_SEARCH_API_KEY",
    timeout_ms: 5000,
    max_response_bytes: 1048576,
    price_per_call_usd: "0.005",
  });
  assert.equal(config.backends[1].base_url, "https://api.tavily.com");
  assert.equal(config.backends[1].kind === "tavily" && config.backends[1].search_depth, "basic");
  assert.equal(config.backends[2].kind === "searxng" && config.backends[2].auth_header, "Authorization");
  assert.deepEqual(config.backends[2].kind === "searxng" && config.backends[2].categories, ["general"]);
  assert.equal(config.max_result_count, 10);
  assert.equal(config.max_result_text_chars, 12000);
  const tools = createWebSearchBackends(config, { BRAVE_SEARCH_API_KEY: "k", TAVILY_API_KEY: "t" });
  assert.equal(tools.defaultBackend.id, "brave");
  assert.deepEqual([...tools.backends.keys()], ["brave", "tavily", "searx"]);
  assert.deepEqual(tools.missingConfiguration, []);
  return tools.close();
});

test("prices convert exactly to integer micro-USD from strings and numbers", async () => {
  const config = webSearchConfigSchema.parse({
    default_backend: "b",
    backends: [
      { id: "a", kind: "searxng", base_url: "http://127.0.0.1:1", price_per_call_usd: "0.000001" },
      { id: "b", kind: "brave", api_key_env: "K", price_per_call_usd: 0.007 },
      { id: "c", kind: "tavily", api_key_env: "K", price_per_call_usd: "1.25" },
    ],
  });
  const tools = createWebSearchBackends(config, { K: "key" });
  assert.deepEqual(
    [...tools.backends.values()].map((backend) => backend.pricePerCallMicroUsd),
    [1, 7000, 1_250_000],
  );
  assert.equal(tools.defaultBackend.id, "b");
  assert.equal(tools.select("c")?.kind, "tavily");
  assert.equal(tools.select("nope"), undefined);
  await tools.close();
});

test("mistakes are refused with the field's path", () => {
  const searx = { id: "s", kind: "searxng", base_url: "http://127.0.0.1:1", price_per_call_usd: 0 };
  assert.deepEqual(issuesOf({ backends: [] }), ["backends: at least one backend"]);
  assert.deepEqual(issuesOf({ backends: [searx, searx] }), ['backends.1.id: duplicate backend id "s"']);
  assert.deepEqual(issuesOf({ backends: [searx], default_backend: "brave" }), [
    'default_backend: unknown backend "brave" (configured: s)',
  ]);
  assert.match(
    issuesOf({ backends: [{ ...searx, price_per_call_usd: "0.0000001" }] })[0],
    /^backends\.0\.price_per_call_usd: .*more than 6 decimals/,
  );
  assert.match(
    issuesOf({ backends: [{ ...searx, price_per_call_usd: -1 }] })[0],
    /^backends\.0\.price_per_call_usd/,
  );
  // A price is required: a search that bills nothing must say so.
  assert.match(
    issuesOf({ backends: [{ id: "s", kind: "searxng", base_url: "http://h" }] })[0],
    /price_per_call_usd/,
  );
  assert.match(
    issuesOf({ backends: [{ id: "b", kind: "brave", price_per_call_usd: 0 }] })[0],
    /^backends\.0\.api_key_env/,
  );
  assert.match(
    issuesOf({ backends: [{ ...searx, base_url: "https://user:pass@searx.example" }] })[0],
    /^backends\.0\.base_url: must not contain credentials/,
  );
  assert.match(issuesOf({ backends: [{ ...searx, base_url: "ftp://h" }] })[0], /^backends\.0\.base_url/);
  assert.match(issuesOf({ backends: [{ ...searx, kind: "google" }] })[0], /^backends\.0\.kind/);
  assert.match(issuesOf({ backends: [{ ...searx, timeout_ms: 10 }] })[0], /^backends\.0\.timeout_ms/);
  assert.match(issuesOf({ backends: [searx], max_result_count: 21 })[0], /^max_result_count/);
  assert.match(issuesOf({ backends: [{ ...searx, surprise: 1 }] })[0], /surprise/);
});

test("keys come from the env object passed in, never from process.env", async () => {
  process.env.WEB_SEARCH_TEST_KEY = "from-process-env";
  try {
    const config = webSearchConfigSchema.parse({
      backends: [
        { id: "b", kind: "brave", api_key_env: "WEB_SEARCH_TEST_KEY", price_per_call_usd: 0 },
        {
          id: "s",
          kind: "searxng",
          base_url: "http://127.0.0.1:1",
          api_key_env: "SEARX_KEY",
          price_per_call_usd: 0,
        },
      ],
    });
    const tools = createWebSearchBackends(config, { SEARX_KEY: "" });
    assert.equal(tools.select("b")!.configured, false);
    // A SearXNG that names a key variable needs it; an empty value counts as unset.
    assert.equal(tools.select("s")!.configured, false);
    assert.deepEqual(tools.missingConfiguration, [
      "b: environment variable WEB_SEARCH_TEST_KEY is not set",
      "s: environment variable SEARX_KEY is not set",
    ]);
    await tools.close();
  } finally {
    delete process.env.WEB_SEARCH_TEST_KEY;
  }
});
