/**
 * The exact response cache, end to end in both storage modes: a request that asks for it (body
 * `hi_cache` or header `X-Hi-Cache`) is answered the second time without calling the upstream, in
 * whichever format the second caller speaks (streamed hits replayed as streams), billed $0 and
 * recorded with `cache_hit: true`; another workspace never gets it; an entry expires with its TTL;
 * cut answers are never stored; the hits and misses are counted in /metrics.
 */
import assert from "node:assert/strict";
import { buildChatCompletion, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

interface Answer {
  status: number;
  id: string;
  text: string;
  body: string;
}

async function post(
  context: TestGateway,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  apiKey = context.apiKey,
): Promise<Answer> {
  const response = await fetch(`${context.url}/api/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const id = response.headers.get("x-request-id") ?? "";
  return { status: response.status, id, text: extractText(text), body: text };
}

/** The answer's text in any of the three formats, streamed or not. */
function extractText(body: string): string {
  if (!body.startsWith("{")) {
    let text = "";
    for (const line of body.split("\n")) {
      if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
      const event = JSON.parse(line.slice(6));
      text += event.choices?.[0]?.delta?.content ?? "";
      if (event.type === "content_block_delta") text += event.delta?.text ?? "";
      if (event.type === "response.output_text.delta") text += event.delta ?? "";
    }
    return text;
  }
  const json = JSON.parse(body);
  return (
    json.choices?.[0]?.message?.content ??
    json.content?.find((block: { type: string }) => block.type === "text")?.text ??
    json.output
      ?.flatMap((item: { content?: Array<{ text?: string }> }) => item.content ?? [])
      .map((part: { text?: string }) => part.text ?? "")
      .join("") ??
    ""
  );
}

interface Record_ {
  status: string;
  cost_micro_usd: string;
  cache_hit: boolean;
  upstream_provider: string | null;
  tokens_prompt: number;
}

async function readRecord(context: TestGateway, id: string, apiKey = context.apiKey): Promise<Record_> {
  for (const deadline = Date.now() + 5_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = (await response.json()) as { data: Record_ };
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.data.status !== "in_progress" || Date.now() > deadline) return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const CHAT = { model: TEST_MODEL, max_tokens: 200, messages: [{ role: "user", content: "Name a colour" }] };
const MESSAGES = {
  model: TEST_MODEL,
  max_tokens: 200,
  messages: [{ role: "user", content: "Name a colour" }],
};
const RESPONSES = {
  model: TEST_MODEL,
  max_output_tokens: 200,
  input: [{ role: "user", content: "Name a colour" }],
};

forEachGatewayMode(
  "a cached request is answered again without the upstream, in every format, streamed or not, at $0",
  async (context) => {
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Teal" })));
    const first = await post(context, "chat/completions", { ...CHAT, hi_cache: true });
    assert.equal(first.status, 200, first.body);
    assert.equal(first.text, "Teal");
    assert.equal(context.upstream.requests.length, 1);
    const firstRecord = await readRecord(context, first.id);
    assert.equal(firstRecord.cache_hit, false);
    assert.notEqual(firstRecord.cost_micro_usd, "0");

    // The same canonical request in each format, streamed and not, asked by header or body.
    const repeats: Array<[string, Record<string, unknown>, Record<string, string>]> = [
      ["chat/completions", { ...CHAT, hi_cache: true }, {}],
      ["chat/completions", { ...CHAT, stream: true }, { "x-hi-cache": "true" }],
      ["messages", { ...MESSAGES, hi_cache: 300 }, {}],
      ["messages", { ...MESSAGES, stream: true }, { "x-hi-cache": "300" }],
      ["responses", { ...RESPONSES, hi_cache: true }, {}],
      ["responses", { ...RESPONSES, stream: true, hi_cache: true }, {}],
    ];
    for (const [path, body, headers] of repeats) {
      const answer = await post(context, path, body, headers);
      const what = `${path} ${body.stream === true ? "streamed" : "whole"}`;
      assert.equal(answer.status, 200, `${what}: ${answer.body}`);
      assert.equal(answer.text, "Teal", `${what}: ${answer.body}`);
      if (body.stream === true) assert.ok(answer.body.includes("data: "), `${what} is a stream`);
      const record = await readRecord(context, answer.id);
      assert.equal(record.cache_hit, true, what);
      assert.equal(record.cost_micro_usd, "0", what);
      assert.equal(record.upstream_provider, "response-cache", what);
    }
    assert.equal(context.upstream.requests.length, 1, "no repeat reached the upstream");

    // A request that does not ask is not answered from the cache.
    await post(context, "chat/completions", CHAT);
    assert.equal(context.upstream.requests.length, 2);
    // Nor one that opts out.
    await post(context, "chat/completions", { ...CHAT, hi_cache: false });
    assert.equal(context.upstream.requests.length, 3);

    const metrics = await (await fetch(`${context.url}/metrics`)).text();
    assert.match(metrics, /hi_gateway_response_cache_lookups_total\{result="hit"\} 6/);
    assert.match(metrics, /hi_gateway_response_cache_lookups_total\{result="miss"\} 1/);
  },
);

forEachGatewayMode(
  "a streamed miss is stored and replayed; the balance pays only the miss",
  async (context) => {
    const first = await post(context, "chat/completions", { ...CHAT, stream: true, hi_cache: true });
    assert.equal(first.status, 200);
    const text = first.text;
    assert.ok(text.length > 0);
    const before = await context.admin.getWorkspace(context.workspaceId);
    const second = await post(context, "chat/completions", { ...CHAT, hi_cache: true });
    assert.equal(second.text, text);
    assert.equal(context.upstream.requests.length, 1);
    assert.equal((await readRecord(context, second.id)).cache_hit, true);
    const after = await context.admin.getWorkspace(context.workspaceId);
    assert.equal(after?.balanceMicroUsd, before?.balanceMicroUsd, "a hit costs nothing");
  },
);

forEachGatewayMode("the cache is never shared across workspaces", async (context) => {
  await post(context, "chat/completions", { ...CHAT, hi_cache: true });
  const other = await context.admin.createWorkspace({ name: "other", creditsUsd: "5" });
  const { secret } = await context.admin.createKey({ workspaceId: other.id, name: "other" });
  const answer = await post(context, "chat/completions", { ...CHAT, hi_cache: true }, {}, secret);
  assert.equal(answer.status, 200);
  assert.equal(context.upstream.requests.length, 2, "the other workspace's request reached the upstream");
  assert.equal((await readRecord(context, answer.id, secret)).cache_hit, false);
  // And a second key of the first workspace shares its workspace's entries.
  const { secret: sibling } = await context.admin.createKey({
    workspaceId: context.workspaceId,
    name: "sibling",
  });
  const hit = await post(context, "chat/completions", { ...CHAT, hi_cache: true }, {}, sibling);
  assert.equal((await readRecord(context, hit.id, sibling)).cache_hit, true);
  assert.equal(context.upstream.requests.length, 2);
});

forEachGatewayMode(
  "an entry expires with its time-to-live; cut answers and errors are never stored",
  async (context) => {
    await post(context, "chat/completions", { ...CHAT, hi_cache: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const expired = await post(context, "chat/completions", { ...CHAT, hi_cache: 1 });
    assert.equal((await readRecord(context, expired.id)).cache_hit, false);
    assert.equal(context.upstream.requests.length, 2);

    const cut = { ...CHAT, messages: [{ role: "user", content: "Write a long story" }], hi_cache: 60 };
    context.upstream.enqueue(
      fakeReply.json(buildChatCompletion({ content: "Once upon", finishReason: "length" })),
    );
    await post(context, "chat/completions", cut);
    context.upstream.enqueue(fakeReply.error(500, { error: { message: "boom", type: "server_error" } }));
    context.upstream.enqueue(fakeReply.error(500, { error: { message: "boom", type: "server_error" } }));
    const failed = await post(context, "chat/completions", cut);
    assert.notEqual(failed.status, 200);
    const answered = await post(context, "chat/completions", cut);
    assert.equal(answered.status, 200);
    assert.equal(
      (await readRecord(context, answered.id)).cache_hit,
      false,
      "neither the cut answer nor the error was stored",
    );
  },
);

forEachGatewayMode("a bad X-Hi-Cache header is refused naming it", async (context) => {
  const answer = await post(context, "chat/completions", CHAT, { "x-hi-cache": "forever" });
  assert.equal(answer.status, 400);
  assert.match(answer.body, /X-Hi-Cache/);
  assert.equal(context.upstream.requests.length, 0);
});

forEachGatewayMode(
  "a hit needs no headroom: a key past its limit and a workspace at $0 still get cached answers",
  async (context) => {
    // Past its limit: the miss's cost is above the total limit set afterwards.
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Teal" })));
    const miss = await post(context, "chat/completions", { ...CHAT, hi_cache: true });
    assert.equal(miss.status, 200, miss.body);
    await context.admin.updateKey(context.keyId, { totalLimitUsd: "0.000001" });
    const refused = await post(context, "chat/completions", CHAT);
    assert.equal(refused.status, 402, refused.body);
    assert.match(refused.body, /key_limit_exceeded/);
    for (const stream of [false, true]) {
      const hit = await post(context, "chat/completions", { ...CHAT, stream, hi_cache: true });
      assert.equal(hit.status, 200, hit.body);
      assert.equal(hit.text, "Teal");
      const record = await readRecord(context, hit.id);
      assert.equal(record.cache_hit, true);
      assert.equal(record.cost_micro_usd, "0");
    }
    // A cached request that misses is still refused for its spend.
    const otherMiss = await post(context, "chat/completions", {
      ...CHAT,
      messages: [{ role: "user", content: "Name a shape" }],
      hi_cache: true,
    });
    assert.equal(otherMiss.status, 402, otherMiss.body);

    // A workspace whose balance is $0.
    const workspace = await context.admin.createWorkspace({ name: "emptied", creditsUsd: "1" });
    const { secret } = await context.admin.createKey({ workspaceId: workspace.id, name: "emptied" });
    context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: "Teal" })));
    const first = await post(context, "messages", { ...MESSAGES, hi_cache: true }, {}, secret);
    assert.equal(first.status, 200, first.body);
    const left = (await context.admin.getWorkspace(workspace.id)).balanceMicroUsd;
    await context.admin.creditWorkspace(workspace.id, `-${left / 1_000_000}`);
    assert.equal((await context.admin.getWorkspace(workspace.id)).balanceMicroUsd, 0);
    const broke = await post(context, "messages", MESSAGES, {}, secret);
    assert.equal(broke.status, 402, broke.body);
    assert.match(broke.body, /insufficient_credits|credit/);
    const hit = await post(context, "responses", { ...RESPONSES, hi_cache: true }, {}, secret);
    assert.equal(hit.status, 200, hit.body);
    assert.equal(hit.text, "Teal");
    assert.equal((await readRecord(context, hit.id, secret)).cache_hit, true);
    assert.equal(context.upstream.requests.length, 2, "only the two misses reached the upstream");
  },
);
