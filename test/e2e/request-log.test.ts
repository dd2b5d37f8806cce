/**
 * The request log: every request ends in exactly one `request` line with its route, status, error
 * code and latency, a generation's line also with its caller, model, served route, attempts,
 * tokens, cost and time to first byte. Keys, tokens, the provider key, prompts and answers sent
 * through every path never appear anywhere in the gateway's log output.
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { OTHER_MODEL, startTestGateway, TEST_MODEL } from "../helpers/test-gateway.js";

/** The provider key the test gateway's config gives the fake upstream. */
const PROVIDER_KEY = "sk-upstream-secret";
const PROMPT = "prompt-marker-7f3a: the secret plan";
const ANSWER = "answer-marker-91c2";
/** 10 prompt tokens at $2/M plus 5 completion tokens at $8/M. */
const COST_OF_10_IN_5_OUT = 60;

type LogLine = Record<string, unknown>;

class CapturedLog extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
  lines(): LogLine[] {
    return this.text
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as LogLine);
  }
  requestLines(requestId: string): LogLine[] {
    return this.lines().filter((line) => line.msg === "request" && line.requestId === requestId);
  }
}

test("one request line per request, with its fields; no secret, prompt or answer in the log", async () => {
  const log = new CapturedLog();
  const context = await startTestGateway("embedded", { logDestination: log, logLevel: "debug" });
  const anthropic = new Anthropic({ apiKey: context.apiKey, baseURL: `${context.url}/api`, maxRetries: 0 });
  const anthropicBearer = new Anthropic({
    authToken: context.apiKey,
    apiKey: null,
    baseURL: `${context.url}/api`,
    maxRetries: 0,
  });
  const secrets = [context.apiKey, context.gateway.internalSecret, PROVIDER_KEY];
  const keyDisplay = (await context.admin.listKeys(context.workspaceId)).find(
    (key) => key.id === context.keyId,
  )?.display;
  assert.ok(keyDisplay);
  /** request id → what its line must say beyond the common fields. */
  const expected = new Map<string, LogLine>();
  const generation = (stream: boolean, route: string): LogLine => ({
    method: "POST",
    route,
    status: 200,
    errorCode: null,
    keyPrefix: keyDisplay,
    workspaceId: context.workspaceId,
    model: TEST_MODEL,
    stream,
    outcome: "ok",
    servedModel: TEST_MODEL,
    provider: "fake",
    servedRoute: "fake/fake-upstream-model",
    attempts: 1,
    tried: ["fake:ok"],
    tokensIn: 10,
    tokensOut: 5,
    costMicroUsd: COST_OF_10_IN_5_OUT,
  });
  const answerJson = () => context.upstream.enqueue(fakeReply.json(buildChatCompletion({ content: ANSWER })));
  const answerStream = () => context.upstream.enqueue(fakeReply.sse(buildTextChunks([ANSWER, " more"])));

  try {
    answerJson();
    const chat = await context.openai.chat.completions
      .create({ model: TEST_MODEL, messages: [{ role: "user", content: PROMPT }] })
      .withResponse();
    assert.equal(chat.data.choices[0].message.content, ANSWER);
    expected.set(chat.response.headers.get("x-request-id")!, generation(false, "/api/v1/chat/completions"));

    answerStream();
    const chatStream = await context.openai.chat.completions
      .create({ model: TEST_MODEL, stream: true, messages: [{ role: "user", content: PROMPT }] })
      .withResponse();
    for await (const _chunk of chatStream.data) {
      // read to the end
    }
    expected.set(
      chatStream.response.headers.get("x-request-id")!,
      generation(true, "/api/v1/chat/completions"),
    );

    answerJson();
    const responses = await context.openai.responses
      .create({ model: TEST_MODEL, input: PROMPT })
      .withResponse();
    assert.equal(responses.data.output_text, ANSWER);
    expected.set(responses.response.headers.get("x-request-id")!, generation(false, "/api/v1/responses"));

    answerStream();
    const responsesStream = await context.openai.responses
      .create({ model: TEST_MODEL, input: PROMPT, stream: true })
      .withResponse();
    for await (const _event of responsesStream.data) {
      // read to the end
    }
    expected.set(
      responsesStream.response.headers.get("x-request-id")!,
      generation(true, "/api/v1/responses"),
    );

    answerJson();
    const message = await anthropic.messages
      .create({ model: TEST_MODEL, max_tokens: 100, messages: [{ role: "user", content: PROMPT }] })
      .withResponse();
    expected.set(message.response.headers.get("x-request-id")!, generation(false, "/api/v1/messages"));

    answerStream();
    const messageStream = await anthropicBearer.messages
      .create({
        model: TEST_MODEL,
        max_tokens: 100,
        stream: true,
        messages: [{ role: "user", content: PROMPT }],
      })
      .withResponse();
    for await (const _event of messageStream.data) {
      // read to the end
    }
    expected.set(messageStream.response.headers.get("x-request-id")!, generation(true, "/api/v1/messages"));

    // The requested model's route fails; the alternative named in `models` serves.
    context.upstream.enqueue(fakeReply.error(503, { error: { message: "Service Unavailable" } }));
    const fallback = await context.openai.chat.completions
      .create({
        model: TEST_MODEL,
        models: [OTHER_MODEL],
        messages: [{ role: "user", content: PROMPT }],
      } as never)
      .withResponse();
    expected.set(fallback.response.headers.get("x-request-id")!, {
      ...generation(false, "/api/v1/chat/completions"),
      servedModel: OTHER_MODEL,
      servedRoute: "fake/fake-other-model",
      attempts: 2,
      tried: ["fake:provider_unavailable", "fake:ok"],
    });

    // Every upstream call carried the provider key, so it went through the gateway.
    for (const request of context.upstream.requests) {
      assert.equal(request.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    }

    const admin = await fetch(`${context.url}/internal/admin/workspaces/${context.workspaceId}`, {
      headers: { "X-Internal-Token": context.gateway.internalSecret },
    });
    assert.equal(admin.status, 200);
    await admin.arrayBuffer();
    expected.set(admin.headers.get("x-request-id")!, {
      method: "GET",
      route: "/internal/admin/workspaces/{id}",
      status: 200,
      errorCode: null,
    });

    const refused = await fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${context.apiKey}x`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: PROMPT }] }),
    });
    assert.equal(refused.status, 401);
    await refused.arrayBuffer();
    expected.set(refused.headers.get("x-request-id")!, {
      method: "POST",
      route: "/api/v1/chat/completions",
      status: 401,
      errorCode: "invalid_api_key",
    });

    // A refusal names its field and says why; an agent's session header and client name are logged.
    const badField = await fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${context.apiKey}`,
        "Content-Type": "application/json",
        "session-id": "codex-session-1",
        "User-Agent": "codex_exec/0.171.0 (Debian 12; x86_64) dumb",
      },
      body: JSON.stringify({
        model: TEST_MODEL,
        temperature: "hot",
        messages: [{ role: "user", content: PROMPT }],
      }),
    });
    assert.equal(badField.status, 400);
    const badFieldError = ((await badField.json()) as { error: { message: string } }).error;
    expected.set(badField.headers.get("x-request-id")!, {
      method: "POST",
      route: "/api/v1/chat/completions",
      status: 400,
      errorCode: "invalid_request",
      errorParam: "temperature",
      errorMessage: badFieldError.message,
      keyPrefix: keyDisplay,
      sessionId: "codex-session-1",
      client: "codex_exec/0.171.0",
    });
    const badMessage = await fetch(`${context.url}/api/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        "x-api-key": context.apiKey,
        "anthropic-version": "2023-06-01",
        "Content-Type": "application/json",
        "x-claude-code-session-id": "0b6d6a1e-claude-session",
        "User-Agent": "claude-cli/2.1.332 (external, cli)",
      },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: PROMPT }] }),
    });
    assert.equal(badMessage.status, 400);
    const badMessageError = ((await badMessage.json()) as { error: { message: string } }).error;
    assert.match(badMessageError.message, /max_tokens/);
    expected.set(badMessage.headers.get("x-request-id")!, {
      method: "POST",
      route: "/api/v1/messages",
      status: 400,
      errorCode: "invalid_request",
      errorMessage: badMessageError.message,
      keyPrefix: keyDisplay,
      sessionId: "0b6d6a1e-claude-session",
      client: "claude-cli/2.1.332",
    });

    const missing = await fetch(`${context.url}/api/v1/no-such-thing`, {
      headers: { "x-api-key": context.apiKey },
    });
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
    expected.set(missing.headers.get("x-request-id")!, {
      method: "GET",
      route: null,
      path: "/api/v1/no-such-thing",
      status: 404,
      errorCode: "invalid_request",
    });

    // A generation's line waits for its settlement: wait until every request has one.
    const deadline = Date.now() + 5000;
    while ([...expected.keys()].some((id) => log.requestLines(id).length === 0)) {
      assert.ok(Date.now() < deadline, "a request line is missing");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await context.close();
  }

  for (const [requestId, fields] of expected) {
    const lines = log.requestLines(requestId);
    assert.equal(lines.length, 1, `one line for ${requestId}`);
    const [line] = lines;
    assert.equal(line.level, 30);
    assert.equal(typeof line.latencyMs, "number");
    for (const [name, value] of Object.entries(fields)) {
      assert.deepEqual(line[name], value, `${name} of ${fields.route ?? fields.path}`);
    }
    if (fields.stream !== undefined) {
      assert.equal(typeof line.ttfbMs, "number");
      assert.ok((line.ttfbMs as number) <= (line.latencyMs as number));
    } else {
      if (fields.keyPrefix === undefined) assert.equal(line.keyPrefix, undefined);
      assert.equal(line.tokensIn, undefined);
    }
  }
  const requestLines = log.lines().filter((line) => line.msg === "request");
  assert.equal(requestLines.length, expected.size, "no line for a request that was not sent");
  for (const secret of [...secrets, PROMPT, ANSWER, `${context.apiKey}x`]) {
    assert.ok(!log.text.includes(secret), "a secret, prompt or answer reached the log");
  }
  // The admin call's raw id stays out of its line (the route pattern names it).
  const adminLine = requestLines.find((line) => line.route === "/internal/admin/workspaces/{id}");
  assert.ok(adminLine && !JSON.stringify(adminLine).includes(context.workspaceId));
});

test("a stream the client leaves and one that fails mid-way: one line each, after settlement", async () => {
  const log = new CapturedLog();
  const context = await startTestGateway("embedded", { logDestination: log, logLevel: "info" });
  const post = (signal?: AbortSignal) =>
    fetch(`${context.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${context.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        model: TEST_MODEL,
        stream: true,
        messages: [{ role: "user", content: PROMPT }],
      }),
      signal,
    });
  const waitForLine = async (requestId: string) => {
    const deadline = Date.now() + 5000;
    while (log.requestLines(requestId).length === 0) {
      assert.ok(Date.now() < deadline, "the request line is missing");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // A second line would follow at once if there were one.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = log.requestLines(requestId);
    assert.equal(lines.length, 1);
    return lines[0];
  };
  try {
    const [first, ...rest] = buildTextChunks([ANSWER, " more"]);
    context.upstream.enqueue(fakeReply.sse([first, rest[0], { delayMs: 10_000 }, ...rest.slice(1)]));
    const leaving = new AbortController();
    const left = await post(leaving.signal);
    const leftId = left.headers.get("x-request-id")!;
    const reader = left.body!.getReader();
    await reader.read();
    leaving.abort();
    const leftLine = await waitForLine(leftId);
    assert.equal(leftLine.status, 200);
    assert.equal(leftLine.outcome, "cancelled");
    assert.deepEqual(leftLine.tried, ["fake:cancelled"]);
    assert.equal(leftLine.servedRoute, "fake/fake-upstream-model");
    assert.equal(typeof leftLine.costMicroUsd, "number");

    context.upstream.enqueue(
      fakeReply.sse([first, rest[0], { delayMs: 300 }, { closeSocket: true }], { done: false }),
    );
    const failed = await post();
    const failedId = failed.headers.get("x-request-id")!;
    await failed.text();
    const failedLine = await waitForLine(failedId);
    assert.equal(failedLine.status, 200);
    assert.equal(failedLine.outcome, "error", JSON.stringify(failedLine));
    assert.equal(failedLine.errorCode, "provider_unavailable");
    assert.equal(failedLine.attempts, 1);
  } finally {
    await context.close();
  }
  for (const secret of [context.apiKey, context.gateway.internalSecret, PROVIDER_KEY, PROMPT, ANSWER]) {
    assert.ok(!log.text.includes(secret), "a secret, prompt or answer reached the log");
  }
});
