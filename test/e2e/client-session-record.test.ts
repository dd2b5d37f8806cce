/**
 * The agent client's session on the generation record, in both runtime modes: a Claude Code-style
 * request (`x-claude-code-session-id`, `claude-cli/…`) and a Codex-style one (`session-id`,
 * `codex_exec/…`, over HTTP and a Responses WebSocket), streamed and not, each show their
 * `session_id` and `client` on the lookup (also while in progress), and the admin API's list of a
 * workspace's requests filtered by `session_id` returns exactly that session's requests.
 */
import assert from "node:assert/strict";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { createOpenApiValidator } from "../helpers/openapi-schema-validator.js";
import { ResponsesSocketClient, toSocketUrl } from "../helpers/responses-socket-client.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const CLAUDE_SESSION = "0b6d6a1e-5f1c-4c1e-9d0b-claude-session";
const CODEX_SESSION = "019a2b3c-codex-session";
const CLAUDE_HEADERS = {
  "x-claude-code-session-id": CLAUDE_SESSION,
  "user-agent": "claude-cli/2.1.332 (external, cli)",
  "anthropic-version": "2023-06-01",
};
const CODEX_HEADERS = {
  "session-id": CODEX_SESSION,
  "user-agent": "codex_exec/0.171.0 (Ubuntu 24.4.0; x86_64) xterm-256color (codex_exec; 0.171.0)",
};

// biome-ignore lint/suspicious/noExplicitAny: wire bodies read field by field.
type Json = any;

async function post(
  context: TestGateway,
  path: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await fetch(`${context.url}/api/v1${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return response.headers.get("x-request-id")!;
}

const claudeTurn = (context: TestGateway, stream: boolean) =>
  post(context, "/messages", CLAUDE_HEADERS, {
    model: TEST_MODEL,
    max_tokens: 64,
    stream,
    messages: [{ role: "user", content: "hi" }],
  });

const codexTurn = (context: TestGateway, stream: boolean) =>
  post(context, "/responses", CODEX_HEADERS, { model: TEST_MODEL, stream, store: false, input: "hi" });

async function lookup(context: TestGateway, id: string, settled = true): Promise<Json> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const response = await fetch(`${context.url}/api/v1/generation?id=${id}`, {
      headers: { authorization: `Bearer ${context.apiKey}` },
    });
    const body = (await response.json()) as Json;
    if (response.status === 200 && (!settled || body.data.status !== "in_progress")) return body.data;
    if (Date.now() > deadline)
      throw new Error(`generation ${id}: ${response.status} ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The admin list's ids, once the database holds `expected` of them (embedded mode writes in batches). */
async function listIds(context: TestGateway, query: string, expected: number): Promise<string[]> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const response = await fetch(
      `${context.url}/internal/admin/workspaces/${context.workspaceId}/generations${query}`,
      { headers: { "X-Internal-Token": context.gateway.internalSecret } },
    );
    const body = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(body));
    const settled = body.data.filter((row: Json) => row.status !== "in_progress");
    if (settled.length >= expected || Date.now() > deadline) return body.data.map((row: Json) => row.id);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

forEachGatewayMode("the client's session on the generation record", async (context, t) => {
  context.upstream.setHandler((request) =>
    request.body.stream
      ? fakeReply.sse(buildTextChunks(["Hello"], { usage: USAGE }))
      : fakeReply.json(buildChatCompletion({ content: "Hello", usage: USAGE })),
  );
  const validator = createOpenApiValidator(await (await fetch(`${context.url}/openapi.json`)).json());

  const claudeIds = [await claudeTurn(context, false), await claudeTurn(context, true)];
  const codexIds = [await codexTurn(context, false), await codexTurn(context, true)];
  const socket = await ResponsesSocketClient.connect(toSocketUrl(context.url), context.apiKey, {
    headers: CODEX_HEADERS,
  });
  try {
    const events = await socket.turn({ model: TEST_MODEL, input: "hi", store: false });
    const last = events.at(-1)!;
    assert.equal(last.type, "response.completed", JSON.stringify(last));
    codexIds.push(last.response.id.replace(/^resp_/, ""));
  } finally {
    await socket.close();
  }
  const plainId = await post(
    context,
    "/chat/completions",
    {},
    {
      model: TEST_MODEL,
      messages: [{ role: "user", content: "hi" }],
    },
  );

  await t.test("the lookup shows each request's session and client, documented", async () => {
    for (const id of claudeIds) {
      const record = await lookup(context, id);
      assert.deepEqual(validator.validate("Generation", { data: record }), []);
      assert.equal(record.session_id, CLAUDE_SESSION);
      assert.equal(record.client, "claude-cli/2.1.332");
      assert.equal(record.ingress_format, "anthropic_messages");
    }
    for (const id of codexIds) {
      const record = await lookup(context, id);
      assert.equal(record.session_id, CODEX_SESSION, id);
      assert.equal(record.client, "codex_exec/0.171.0", id);
    }
    const plain = await lookup(context, plainId);
    assert.equal(plain.session_id, null);
    assert.equal(plain.client, "node");
  });

  await t.test("the admin list filtered by session_id returns exactly that session's requests", async () => {
    const claude = await listIds(context, `?session_id=${CLAUDE_SESSION}`, claudeIds.length);
    assert.deepEqual(claude.toSorted(), claudeIds.toSorted());
    const codex = await listIds(context, `?session_id=${CODEX_SESSION}`, codexIds.length);
    assert.deepEqual(codex.toSorted(), codexIds.toSorted());
    assert.deepEqual(await listIds(context, "?session_id=no-such-session", 0), []);
    const all = await listIds(context, "", claudeIds.length + codexIds.length + 1);
    assert.equal(all.length, claudeIds.length + codexIds.length + 1);
  });

  await t.test("a request still in progress already carries its session", async () => {
    // The answer's head goes out with its first part; the rest waits, so the record stays open.
    const [role, first, ...rest] = buildTextChunks(["slow", " answer"], { usage: USAGE });
    context.upstream.enqueue(fakeReply.sse([role!, first!, { delayMs: 1_500 }, ...rest]));
    const response = await fetch(`${context.url}/api/v1/messages`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${context.apiKey}`,
        "Content-Type": "application/json",
        ...CLAUDE_HEADERS,
      },
      body: JSON.stringify({
        model: TEST_MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    const id = response.headers.get("x-request-id")!;
    const inProgress = await lookup(context, id, false);
    assert.equal(inProgress.status, "in_progress");
    assert.equal(inProgress.session_id, CLAUDE_SESSION);
    assert.equal(inProgress.client, "claude-cli/2.1.332");
    await response.text();
    const settled = await lookup(context, id);
    assert.equal(settled.status, "ok");
    assert.equal(settled.session_id, CLAUDE_SESSION);
  });
});
