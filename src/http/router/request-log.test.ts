import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestOutcome } from "../../../test/helpers/generation-records.js";
import type { ApiKeyWithWorkspace } from "../../auth/accounts.js";
import type { SettledGeneration } from "../../engine/admitted-generation.js";
import { formatRequestLine, RequestLogEntry } from "./request-log.js";

/** The line as an object, field by field in the documented order: what the text must parse to. */
function expectedLine(entry: RequestLogEntry, time: number): Record<string, unknown> {
  const settled = entry.settledGeneration;
  const line: Record<string, unknown> = {
    level: 30,
    time,
    msg: "request",
    requestId: entry.requestId,
    method: entry.method,
    route: entry.route ?? null,
    status: entry.status,
    errorCode: entry.errorCode ?? settled?.outcome.errorCode ?? null,
  };
  if (entry.errorParam !== undefined) line.errorParam = entry.errorParam;
  if (entry.errorMessage !== undefined) line.errorMessage = entry.errorMessage;
  line.latencyMs = Math.round(entry.endedAt - entry.startedAt);
  if (entry.route === undefined) line.path = entry.path.slice(0, 200);
  if (entry.caller !== undefined) {
    line.keyPrefix = entry.caller.key.display;
    line.workspaceId = entry.caller.workspace.id;
  }
  if (entry.sessionId !== undefined) line.sessionId = entry.sessionId;
  if (entry.client !== undefined) line.client = entry.client;
  if (entry.model !== undefined) {
    line.model = entry.model;
    line.stream = entry.stream;
  }
  if (entry.firstByteAt !== undefined) line.ttfbMs = Math.round(entry.firstByteAt - entry.startedAt);
  if (settled !== undefined) {
    const { outcome, served } = settled;
    line.outcome = outcome.status;
    line.servedModel = served?.model ?? null;
    line.provider = served?.provider ?? null;
    line.servedRoute = served === undefined ? null : `${served.provider}/${served.upstreamModel}`;
    line.upstreamModel = served === undefined ? null : outcome.upstreamModel;
    const attempts = outcome.attempts ?? [];
    line.attempts = attempts.length;
    line.tried = attempts.map((attempt) => `${attempt.provider}:${attempt.outcome}`);
    line.tokensIn = outcome.tokensPrompt;
    line.tokensOut = outcome.tokensCompletion;
    line.costMicroUsd = outcome.costMicroUsd;
  }
  return line;
}

/** The text with its `time` read back, and the text JSON.stringify makes of the expected object. */
function formatBoth(entry: RequestLogEntry): { text: string; expected: string } {
  const text = formatRequestLine(entry);
  const time = (JSON.parse(text) as { time: number }).time;
  return { text, expected: JSON.stringify(expectedLine(entry, time)) };
}

function createEntry(path: string, route: string | undefined): RequestLogEntry {
  const entry = new RequestLogEntry("gen_01", "POST", route, path, 1000.2);
  entry.status = 200;
  entry.endedAt = 1012.7;
  return entry;
}

const CALLER = {
  key: { display: 'hi-ab"c…wxyz' },
  workspace: { id: "ws_1" },
} as unknown as ApiKeyWithWorkspace;

test("the request line is the JSON of its fields, byte for byte, for an unmatched path with characters JSON escapes", () => {
  for (const path of [
    '/a"b\\c',
    "/tab\there\u0001",
    "/lone\ud800half",
    "/emoji\u{1f600}",
    "/plain",
    "/x".repeat(150),
  ]) {
    const entry = createEntry(path, undefined);
    entry.status = 404;
    const { text, expected } = formatBoth(entry);
    assert.equal(text, expected);
    assert.equal((JSON.parse(text) as { path: string }).path, path.slice(0, 200));
  }
});

test("a refused request's line names its field, message, session and client, as JSON.stringify would", () => {
  const entry = createEntry("/api/v1/messages", "/api/v1/messages");
  entry.status = 400;
  entry.caller = CALLER;
  entry.noteErrorBody(
    400,
    Buffer.from(
      JSON.stringify({
        error: {
          code: "invalid_request",
          param: "messages[0].content",
          message: `a "quoted" ${"x".repeat(400)}`,
        },
      }),
    ),
  );
  entry.noteClient({
    "x-claude-code-session-id": 'sess"1',
    "session-id": "not this one",
    "user-agent": "claude-cli/2.1.332 (external, cli)",
  });
  const { text, expected } = formatBoth(entry);
  assert.equal(text, expected);
  const line = JSON.parse(text) as Record<string, string>;
  assert.equal(line.errorParam, "messages[0].content");
  assert.equal(line.errorMessage.length, 300, "a long message is cut");
  assert.equal(line.sessionId, 'sess"1');
  assert.equal(line.client, "claude-cli/2.1.332");
});

test("the request line of a settled generation carries its caller, model, attempts, tokens and cost as JSON.stringify would", () => {
  const entry = createEntry("/api/v1/chat/completions", "/api/v1/chat/completions");
  entry.caller = CALLER;
  entry.format = "chat_completions";
  entry.model = "openai/gpt-4o-mini";
  entry.stream = true;
  entry.firstByteAt = 1003.4;
  const attempts = [
    {
      provider: "openai",
      model: "openai/gpt-4o-mini",
      upstreamModel: "gpt-4o-mini",
      outcome: "provider_unavailable",
      latencyMs: 3,
    },
    {
      provider: "azure",
      model: "openai/gpt-4o-mini",
      upstreamModel: "gpt-4o-mini",
      outcome: "ok",
      latencyMs: 8,
    },
  ];
  const settled: SettledGeneration = {
    outcome: createTestOutcome({ attempts }),
    served: attempts[1],
    toolCalls: [],
  };
  entry.settledGeneration = settled;
  const { text, expected } = formatBoth(entry);
  assert.equal(text, expected);
  assert.deepEqual((JSON.parse(text) as { tried: string[] }).tried, [
    "openai:provider_unavailable",
    "azure:ok",
  ]);
});

test("the request line of a generation no route served, or that failed before settling, keeps its nulls", () => {
  const failed = createEntry("/api/v1/messages", "/api/v1/messages");
  failed.status = 503;
  failed.caller = CALLER;
  failed.model = 'odd "model"';
  failed.settledGeneration = {
    outcome: createTestOutcome({
      status: "error",
      errorCode: "provider_unavailable",
      upstreamModel: null,
      attempts: [],
    }),
    served: undefined,
    toolCalls: [],
  };
  const failedLine = formatBoth(failed);
  assert.equal(failedLine.text, failedLine.expected);

  const refused = createEntry("/api/v1/responses", "/api/v1/responses");
  refused.status = 400;
  refused.errorCode = "invalid_request";
  refused.model = "m";
  const refusedLine = formatBoth(refused);
  assert.equal(refusedLine.text, refusedLine.expected);
});
