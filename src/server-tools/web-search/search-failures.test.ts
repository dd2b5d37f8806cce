/**
 * Every way a backend call can fail gives a typed outcome (never a throw), costs nothing and ends
 * within the call's deadline — for each backend kind.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import {
  type FakeSearchBackend,
  searchReply,
  startFakeSearchBackend,
} from "../../../test/helpers/fake-search-backend.js";
import { webSearchConfigSchema } from "../../config/server-tools/web-search-config.js";
import { createWebSearchBackends, type WebSearchBackends } from "./create-web-search-backends.js";
import type { SearchBackend, SearchFailure, SearchOutcome } from "./search-types.js";

// Long enough that a loaded machine's slow answer is not taken for a timeout.
const TIMEOUT_MS = 1_500;
const MAX_BYTES = 4096;
const KINDS = ["searxng", "brave", "tavily"] as const;
let fake: FakeSearchBackend;
let tools: WebSearchBackends;

function backendConfig(kind: (typeof KINDS)[number], baseUrl: string, id: string = kind) {
  return {
    id,
    kind,
    base_url: baseUrl,
    ...(kind === "searxng" ? {} : { api_key_env: "SEARCH_KEY" }),
    timeout_ms: TIMEOUT_MS,
    max_response_bytes: MAX_BYTES,
    price_per_call_usd: "0.01",
  };
}

before(async () => {
  fake = await startFakeSearchBackend();
  const config = webSearchConfigSchema.parse({
    backends: KINDS.map((kind) => backendConfig(kind, fake.baseUrl)),
  });
  tools = createWebSearchBackends(config, { SEARCH_KEY: "k-secret" });
});

after(async () => {
  await tools.close();
  await fake.close();
});

function expectFailure(outcome: SearchOutcome, reason: SearchFailure["reason"]): SearchFailure {
  assert.equal(outcome.ok, false, `expected a ${reason} failure, got success`);
  const failure = outcome as SearchFailure;
  assert.equal(failure.reason, reason, failure.message);
  assert.equal(failure.costMicroUsd, 0);
  assert.doesNotMatch(failure.message, /k-secret/);
  return failure;
}

async function timed(
  backend: SearchBackend,
  signal?: AbortSignal,
): Promise<{ outcome: SearchOutcome; ms: number }> {
  const started = performance.now();
  const outcome = await backend.search({ query: "q" }, signal);
  return { outcome, ms: performance.now() - started };
}

for (const kind of KINDS) {
  const backend = () => tools.select(kind)!;

  test(`${kind}: HTTP 500, 401 and 429 are http_status failures carrying the status`, async () => {
    for (const status of [500, 401, 429]) {
      fake.enqueue(
        searchReply.status(status, { error: "nope" }, status === 429 ? { "retry-after": "3" } : {}),
      );
      const failure = expectFailure(await backend().search({ query: "q" }), "http_status");
      assert.equal(failure.status, status);
      assert.equal(failure.backend, kind);
      assert.match(failure.message, new RegExp(`HTTP ${status}`));
    }
  });

  test(`${kind}: a redirect is not followed`, async () => {
    fake.enqueue(searchReply.status(302, "", { location: "http://127.0.0.1:9/elsewhere" }));
    const before = fake.requests.length;
    const failure = expectFailure(await backend().search({ query: "q" }), "http_status");
    assert.equal(failure.status, 302);
    assert.equal(fake.requests.length, before + 1);
  });

  test(`${kind}: a body that is not JSON, or JSON of another shape, is bad_response`, async () => {
    fake.enqueue(searchReply.raw("<html>Service temporarily unavailable</html>"));
    expectFailure(await backend().search({ query: "q" }), "bad_response");
    fake.enqueue(searchReply.json({ unexpected: true }));
    expectFailure(await backend().search({ query: "q" }), "bad_response");
  });

  test(`${kind}: a body past the byte cap is bad_response, declared or streamed`, async () => {
    fake.enqueue(searchReply.raw(Buffer.alloc(MAX_BYTES + 1, "x")));
    const declared = expectFailure(await backend().search({ query: "q" }), "bad_response");
    assert.match(declared.message, /larger than 4096 bytes/);
    // 64 MiB without a Content-Length: reading stops at the cap instead of taking the whole body.
    fake.enqueue(searchReply.endless(64 * 1024 * 1024));
    const { outcome, ms } = await timed(backend());
    expectFailure(outcome, "bad_response");
    assert.ok(ms < TIMEOUT_MS, `took ${ms} ms`);
  });

  test(`${kind}: a backend that never answers, or stalls mid-body, times out at the deadline`, async () => {
    for (const reply of [searchReply.hang(), searchReply.stallBody()]) {
      fake.enqueue(reply);
      const { outcome, ms } = await timed(backend());
      const failure = expectFailure(outcome, "timeout");
      assert.match(failure.message, new RegExp(`${TIMEOUT_MS} ms`));
      assert.ok(ms >= TIMEOUT_MS - 20 && ms < TIMEOUT_MS + 1500, `took ${ms} ms`);
    }
    // The stalled connections were torn down, not left open.
    await fake.waitForNoOpenReplies();
  });

  test(`${kind}: the caller's abort ends the call at once as aborted`, async () => {
    fake.enqueue(searchReply.hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("client gone")), 30);
    const { outcome, ms } = await timed(backend(), controller.signal);
    expectFailure(outcome, "aborted");
    assert.ok(ms < TIMEOUT_MS, `took ${ms} ms`);
    expectFailure(await backend().search({ query: "q" }, AbortSignal.abort()), "aborted");
  });

  test(`${kind}: a query that no backend accepts is invalid_input and nothing is sent`, async () => {
    const before = fake.requests.length;
    expectFailure(await backend().search({ query: "   " }), "invalid_input");
    expectFailure(await backend().search({ query: "x".repeat(401) }), "invalid_input");
    expectFailure(await backend().search({ query: "w ".repeat(51) }), "invalid_input");
    assert.equal(fake.requests.length, before);
  });
}

test("a refused connection is a network failure", async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const config = webSearchConfigSchema.parse({
    backends: KINDS.map((kind) => backendConfig(kind, `http://127.0.0.1:${port}`)),
  });
  const closed = createWebSearchBackends(config, { SEARCH_KEY: "k-secret" });
  try {
    for (const kind of KINDS) {
      const failure = expectFailure(await closed.select(kind)!.search({ query: "q" }), "network");
      assert.match(failure.message, /ECONNREFUSED/);
    }
  } finally {
    await closed.close();
  }
});
