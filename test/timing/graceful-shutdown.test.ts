/**
 * SIGTERM and SIGINT on a real `src/main.ts` process (embedded mode, its data in a temporary
 * folder), with streams and non-streamed requests in flight against a loopback upstream:
 *
 * - readiness turns 503 at once, new requests are refused with 429 + Retry-After and their
 *   connection closed, in-flight requests and streams that end within the drain deadline run to
 *   their end, and what still runs at the deadline ends with its format's error (the stream's
 *   error event, or the error answer), its upstream stopped and its record settled; usage records
 *   reach the database (the journal is emptied), and the process exits 0;
 * - a second signal exits at once.
 */
import assert from "node:assert/strict";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { stringify } from "yaml";
import { openStore } from "../../src/storage/open-store.js";
import { waitFor } from "../helpers/disposable-servers.js";
import {
  buildChatCompletion,
  buildTextChunks,
  type FakeHandler,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../helpers/fake-openai-upstream.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.js";
import { createTempDir } from "../helpers/storage-modes.js";
import { createTestConfigFile, TEST_MODEL } from "../helpers/test-gateway.js";

interface Harness {
  gateway: GatewayProcess;
  upstream: FakeOpenAiUpstream;
  dataDir: string;
  apiKey: string;
  workspaceId: string;
}

async function startHarness(t: TestContext, drainTimeoutMs: number, handler: FakeHandler): Promise<Harness> {
  const upstream = await startFakeOpenAiUpstream({ handler });
  const folder = await createTempDir("gw-shutdown-");
  const configPath = join(folder.path, "gateway.yaml");
  await writeFile(configPath, stringify(createTestConfigFile(upstream.baseUrl)));
  const dataDir = join(folder.path, "data");
  let started: GatewayProcess | undefined;
  t.after(async () => {
    await started?.stop(2_000);
    await upstream.close();
    await folder.cleanup();
  });
  const gateway = await startGatewayProcess({
    // A loaded machine can take long to compile and start the process.
    readyTimeoutMs: 90_000,
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: dataDir,
      FAKE_UPSTREAM_KEY: "sk-upstream",
      LOG_LEVEL: "info",
      GATEWAY_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
    },
  });
  started = gateway;
  const apiKey = /\n {2}(hi-[0-9A-Za-z]+)\n/.exec(gateway.output())?.[1];
  const workspaceId = /Created workspace "default" \((\S+)\)/.exec(gateway.output())?.[1];
  assert.ok(apiKey && workspaceId, `the first start prints a key:\n${gateway.output()}`);
  return { gateway, upstream, dataDir, apiKey, workspaceId };
}

/** `prompt` tells the upstream how to answer (see the test's handler). */
function post(harness: Harness, path: string, stream: boolean, prompt = "hi"): Promise<Response> {
  return fetch(`${harness.gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${harness.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      model: TEST_MODEL,
      messages: [{ role: "user", content: prompt }],
      stream,
      ...(path.endsWith("/messages") ? { max_tokens: 256 } : {}),
    }),
  });
}

/** Reads a streamed body to its end, noting when the first bytes came. */
async function readStream(response: Response): Promise<{ text: string; endedAt: number }> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
  }
  return { text, endedAt: performance.now() };
}

function exitOf(gateway: GatewayProcess, graceMs: number): Promise<{ how: string; at: number }> {
  return gateway.stop(graceMs).then((how) => ({ how, at: performance.now() }));
}

/** After the process exited: what its journal holds, then the records (the store replays the journal first). */
async function readRecords(harness: Harness, ids: string[]) {
  const segments = (await readdir(join(harness.dataDir, "journal"))).filter((name) =>
    name.startsWith("segment-"),
  );
  const store = await openStore({ dataDir: harness.dataDir });
  try {
    const records = await Promise.all(ids.map((id) => store.generations.get(id, harness.workspaceId)));
    return { segments, records };
  } finally {
    await store.close();
  }
}

const DRAIN_TIMEOUT_MS = 4_000;

test("SIGTERM: readiness 503 at once, new requests refused; in-flight work that ends within the drain deadline finishes, the rest ends with its format's error and is settled; records flushed, exit 0", async (t) => {
  // "short": ends well within the drain deadline; "long": would run 20 s more; "hang": never answers.
  const harness = await startHarness(t, DRAIN_TIMEOUT_MS, async (request) => {
    const prompt = String(request.body?.messages?.[0]?.content);
    if (request.body?.stream === true) {
      const pieces =
        prompt === "long"
          ? Array.from({ length: 100 }, (_, index) => `w${index} `)
          : ["one ", "two ", "three ", "four"];
      const chunks = buildTextChunks(pieces);
      return fakeReply.sse(chunks.flatMap((chunk) => [chunk, { delayMs: prompt === "long" ? 200 : 250 }]));
    }
    if (prompt === "hang") return fakeReply.hang();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return fakeReply.json(buildChatCompletion({ content: "finished during the drain" }));
  });
  const streams = await Promise.all([
    post(harness, "/api/v1/chat/completions", true, "short"),
    post(harness, "/api/v1/messages", true, "short"),
    post(harness, "/api/v1/chat/completions", true, "long"),
    post(harness, "/api/v1/messages", true, "long"),
  ]);
  const plain = post(harness, "/api/v1/chat/completions", false, "short");
  const hanging = post(harness, "/api/v1/chat/completions", false, "hang");
  await harness.upstream.waitForRequests(6, 10_000);
  for (const response of streams) assert.equal(response.status, 200);
  const reading = streams.map(readStream);

  const signalledAt = performance.now();
  const exited = exitOf(harness.gateway, 30_000);

  const readiness = await waitFor(
    "readiness turns 503",
    async () => {
      const response = await fetch(`${harness.gateway.url}/readyz`);
      const body = (await response.json()) as Record<string, unknown>;
      return response.status === 503 ? { body, at: performance.now() } : undefined;
    },
    { timeoutMs: 2_000, intervalMs: 20 },
  );
  assert.ok(readiness.at - signalledAt < 1_000, `readiness 503 after ${readiness.at - signalledAt} ms`);
  assert.equal(readiness.body.draining, true);
  assert.equal((await fetch(`${harness.gateway.url}/healthz`)).status, 200, "still alive while draining");

  const refused = await post(harness, "/api/v1/chat/completions", false);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal(refused.headers.get("connection"), "close");
  const refusal = (await refused.json()) as { error: { code: string; message: string } };
  assert.equal(refusal.error.code, "rate_limit_exceeded");
  assert.match(refusal.error.message, /shutting down/);
  assert.equal(harness.upstream.requests.length, 6, "a refused request never reaches the upstream");

  // Within the deadline: finished normally.
  const [chatShort, messagesShort, chatLong, messagesLong] = await Promise.all(reading);
  assert.match(chatShort.text, /data: \[DONE\]\n\n$/, "the short chat stream ends normally");
  assert.match(messagesShort.text, /event: message_stop\n/, "the short messages stream ends normally");
  const plainResponse = await plain;
  assert.equal(plainResponse.status, 200);
  const plainBody = (await plainResponse.json()) as { choices: Array<{ message: { content: string } }> };
  assert.equal(plainBody.choices[0].message.content, "finished during the drain");

  // Past the deadline: ended with the format's error, the upstream stopped.
  for (const ended of [chatLong.endedAt, messagesLong.endedAt]) {
    const after = ended - signalledAt;
    assert.ok(
      after > DRAIN_TIMEOUT_MS - 300 && after < DRAIN_TIMEOUT_MS + 5_000,
      `a long stream ended ${after.toFixed(0)} ms after SIGTERM`,
    );
  }
  assert.match(chatLong.text, /"content":"w1 "/, "the stream had begun");
  const chatError = /data: (\{"error".*\})\n\n$/.exec(chatLong.text);
  assert.ok(chatError, `the chat stream ends with its error frame:\n${chatLong.text.slice(-300)}`);
  assert.equal(JSON.parse(chatError[1]).error.code, "rate_limit_exceeded");
  assert.doesNotMatch(chatLong.text, /\[DONE\]/);
  const messagesError = /event: error\ndata: (.*)\n\n$/.exec(messagesLong.text);
  assert.ok(messagesError, `the messages stream ends with an error event:\n${messagesLong.text.slice(-300)}`);
  assert.equal(JSON.parse(messagesError[1]).error.code, "rate_limit_exceeded");
  const hangingResponse = await hanging;
  assert.equal(hangingResponse.status, 429);
  assert.equal(hangingResponse.headers.get("retry-after"), "1");
  assert.equal(
    ((await hangingResponse.json()) as { error: { code: string } }).error.code,
    "rate_limit_exceeded",
  );
  await Promise.all(harness.upstream.requests.map((request) => request.closed));

  const exit = await exited;
  assert.equal(exit.how, "code=0 signal=null");
  assert.ok(
    exit.at >= Math.max(chatLong.endedAt, messagesLong.endedAt),
    "the process waited for its requests",
  );
  assert.match(harness.gateway.output(), /"msg":"drained"/);

  const ids = [...streams, plainResponse, hangingResponse].map(
    (response) => response.headers.get("x-request-id")!,
  );
  const { segments, records } = await readRecords(harness, ids);
  assert.deepEqual(
    records.map((record) => record?.status),
    ["ok", "ok", "cancelled", "cancelled", "ok", "cancelled"],
  );
  for (const record of records.slice(0, 3)) assert.ok((record?.costMicroUsd ?? 0) > 0, "billed");
  assert.ok((records[2]?.tokensCompletion ?? 0) > 0, "the delivered part of a cut stream is billed");
  assert.deepEqual(segments, [], "the usage journal was written to the database and emptied");
});

test("a second signal exits at once", async (t) => {
  const harness = await startHarness(t, 30_000, () => {
    const chunks = buildTextChunks(Array.from({ length: 200 }, (_, index) => `w${index} `));
    return fakeReply.sse(chunks.flatMap((chunk) => [chunk, { delayMs: 200 }]));
  });
  const stream = await post(harness, "/api/v1/chat/completions", true);
  assert.equal(stream.status, 200);
  const reading = readStream(stream).catch(() => undefined);
  const exited = exitOf(harness.gateway, 30_000);
  await waitFor(
    "draining",
    async () => ((await fetch(`${harness.gateway.url}/readyz`)).status === 503 ? true : undefined),
    { timeoutMs: 2_000, intervalMs: 20 },
  );
  const secondAt = performance.now();
  process.kill(harness.gateway.pid, "SIGINT");
  const exit = await exited;
  assert.ok(exit.at - secondAt < 1_500, `exited ${exit.at - secondAt} ms after the second signal`);
  assert.equal(exit.how, "code=130 signal=null");
  await reading;
});
