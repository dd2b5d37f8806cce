import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  buildChatCompletion,
  type FakeOpenAiUpstream,
  fakeReply,
  startFakeOpenAiUpstream,
} from "../../../test/helpers/fake-openai-upstream.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { createUpstreamHttpClient, mapNetworkError, readUpstreamText } from "./http-client.js";

let upstream: FakeOpenAiUpstream;
const client = createUpstreamHttpClient();
const timeouts = { connectMs: 1000, headMs: 2000, idleMs: 2000 };

before(async () => {
  upstream = await startFakeOpenAiUpstream();
});

after(async () => {
  await client.destroy();
  await upstream.close();
});

test("sequential requests to one origin reuse a keep-alive connection", async () => {
  upstream.enqueue(fakeReply.json(buildChatCompletion()), fakeReply.json(buildChatCompletion()));
  const first = upstream.requests.length;
  for (let round = 0; round < 2; round += 1) {
    const response = await client.send({
      url: `${upstream.baseUrl}/chat/completions`,
      headers: {},
      body: "{}",
      timeouts,
    });
    assert.equal(response.status, 200);
    assert.equal(JSON.parse(await readUpstreamText(response.body)).object, "chat.completion");
    // undici frees the connection a tick after the body ends; without a pause the pool opens another.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(upstream.requests[first].remotePort, upstream.requests[first + 1].remotePort);
});

test("non-2xx responses reject with a classified GatewayError", async () => {
  upstream.enqueue(fakeReply.error(429, { error: { message: "slow down" } }, { "retry-after-ms": "4200" }));
  await assert.rejects(
    client.send({ url: `${upstream.baseUrl}/chat/completions`, headers: {}, body: "{}", timeouts }),
    (error: unknown) =>
      error instanceof GatewayError && error.code === "provider_rate_limit" && error.retryAfterSeconds === 5,
  );
});

test("an abort before headers rejects with the abort reason", async () => {
  upstream.enqueue(fakeReply.hang());
  const controller = new AbortController();
  const reason = new Error("client went away");
  const expectedRequests = upstream.requests.length + 1;
  const sending = client.send({
    url: `${upstream.baseUrl}/chat/completions`,
    headers: {},
    body: "{}",
    timeouts,
    signal: controller.signal,
  });
  await upstream.waitForRequests(expectedRequests);
  setTimeout(() => controller.abort(reason), 50);
  await assert.rejects(sending, (error: unknown) => error === reason);
});

test("readUpstreamText enforces its size cap", async () => {
  upstream.enqueue(
    fakeReply.raw("x".repeat(10_000), { headers: { "content-type": "text/plain" }, chunkSize: 1000 }),
  );
  const response = await client.send({
    url: `${upstream.baseUrl}/chat/completions`,
    headers: {},
    body: "{}",
    timeouts,
  });
  await assert.rejects(readUpstreamText(response.body, { maxBytes: 4096 }), { code: "provider_unavailable" });
});

test("network error codes map to the taxonomy, also when nested", () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(mapNetworkError(withCode("UND_ERR_CONNECT_TIMEOUT")).code, "provider_timeout");
  assert.equal(mapNetworkError(withCode("UND_ERR_HEADERS_TIMEOUT")).code, "provider_timeout");
  assert.equal(mapNetworkError(withCode("UND_ERR_BODY_TIMEOUT")).code, "provider_timeout");
  assert.equal(mapNetworkError(withCode("ECONNRESET")).code, "provider_unavailable");
  assert.equal(
    mapNetworkError(withCode("ENOTFOUND")).message,
    "The upstream provider's host name did not resolve",
  );
  const aggregate = new AggregateError(
    [withCode("ECONNREFUSED"), withCode("ECONNREFUSED")],
    "connect failed",
  );
  assert.match(mapNetworkError(aggregate).message, /refused/);
  assert.match(mapNetworkError(new Error("wrapped", { cause: withCode("ECONNREFUSED") })).message, /refused/);
  const original = new GatewayError("provider_auth", "x");
  assert.equal(mapNetworkError(original), original);
});
