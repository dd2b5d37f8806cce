/**
 * Headroom headers (docs/limits.md, "Headroom headers"): every generation answer of a key with a
 * spend limit says what each limit and the workspace's balance leave after its own reservation,
 * as read at admission. In both modes, for each format, streamed and not: a fresh workspace and
 * key (daily $1, monthly $2, total $3; $5 of credit) so the expected values are exact. The first
 * request's headers are limit − its reservation (the worst case a cost quote of the same request
 * names); once its cost ($2 / $8 per million tokens: 10 prompt + 100 output tokens = 820 µUSD) is
 * settled, the second's are limit − 820 − its reservation. A key without limits gets none, an
 * invoiced workspace no balance header; /openapi.json describes them.
 */
import assert from "node:assert/strict";
import { buildChatCompletion, buildTextChunks, fakeReply } from "../helpers/fake-openai-upstream.js";
import { forEachGatewayMode, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

const USAGE = { prompt_tokens: 10, completion_tokens: 100, total_tokens: 110 };
/** 10 × 2 + 100 × 8 µUSD (TEST_PRICES: $2 and $8 per million tokens). */
const COST = 820;
const LIMITS = { daily: 1_000_000, monthly: 2_000_000, total: 3_000_000 };
const CREDIT = 5_000_000;

const HEADERS = {
  daily: "x-hi-limit-remaining-daily-micro-usd",
  monthly: "x-hi-limit-remaining-monthly-micro-usd",
  total: "x-hi-limit-remaining-total-micro-usd",
  balance: "x-hi-balance-remaining-micro-usd",
} as const;

interface Format {
  name: string;
  path: string;
  body(stream: boolean): Record<string, unknown>;
}

const FORMATS: Format[] = [
  {
    name: "chat",
    path: "/api/v1/chat/completions",
    body: (stream) => ({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "how much is left?" }],
      max_tokens: 500,
      stream,
    }),
  },
  {
    name: "responses",
    path: "/api/v1/responses",
    body: (stream) => ({ model: TEST_MODEL, input: "how much is left?", max_output_tokens: 500, stream }),
  },
  {
    name: "messages",
    path: "/api/v1/messages",
    body: (stream) => ({
      model: TEST_MODEL,
      messages: [{ role: "user", content: "how much is left?" }],
      max_tokens: 500,
      stream,
    }),
  },
];

function post(
  context: TestGateway,
  secret: string,
  format: Format,
  stream: boolean,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${context.url}${format.path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json", ...extra },
    body: JSON.stringify(format.body(stream)),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the quote is read field by field.
async function quote(context: TestGateway, secret: string, format: Format, stream: boolean): Promise<any> {
  const response = await post(context, secret, format, stream, { "X-Hi-Dry-Run": "1" });
  assert.equal(response.status, 200);
  return response.json();
}

function readHeadroom(response: Response): Record<keyof typeof HEADERS, string | null> {
  return {
    daily: response.headers.get(HEADERS.daily),
    monthly: response.headers.get(HEADERS.monthly),
    total: response.headers.get(HEADERS.total),
    balance: response.headers.get(HEADERS.balance),
  };
}

function enqueueReply(context: TestGateway, stream: boolean): void {
  context.upstream.enqueue(
    stream
      ? fakeReply.sse(buildTextChunks(["plenty"], { usage: USAGE }))
      : fakeReply.json(buildChatCompletion({ content: "plenty", usage: USAGE })),
  );
}

/** Until the quote sees no reservation and the cost settled (an answer may end before both). */
async function waitForSettled(context: TestGateway, secret: string, format: Format): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const seen = (await quote(context, secret, format, false)).limits.daily.remaining_micro_usd;
    if (seen === String(LIMITS.daily - COST)) return;
    assert.ok(Date.now() < deadline, `settlement not seen (daily remaining ${seen})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

forEachGatewayMode("headroom headers: each format, streamed and not, exact in micro-USD", async (context) => {
  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      const label = `${format.name}${stream ? " streamed" : ""}`;
      const workspace = await context.admin.createWorkspace({
        name: `headroom ${label}`,
        creditsUsd: "5",
      });
      const { secret } = await context.admin.createKey({
        workspaceId: workspace.id,
        name: label,
        dailyLimitUsd: "1",
        monthlyLimitUsd: "2",
        totalLimitUsd: "3",
      });
      const reservation = Number((await quote(context, secret, format, stream)).reservation_micro_usd);
      assert.ok(reservation > COST, `${label}: the worst case (${reservation}) bounds the cost`);

      enqueueReply(context, stream);
      const first = await post(context, secret, format, stream);
      assert.equal(first.status, 200, label);
      // Read off the response head: there before any byte of the body is taken.
      assert.deepEqual(
        readHeadroom(first),
        {
          daily: String(LIMITS.daily - reservation),
          monthly: String(LIMITS.monthly - reservation),
          total: String(LIMITS.total - reservation),
          balance: String(CREDIT - reservation),
        },
        `${label}: the first request's own worst case is held`,
      );
      const text = await first.text();
      if (stream) assert.match(text, /plenty/);

      await waitForSettled(context, secret, format);
      enqueueReply(context, stream);
      const second = await post(context, secret, format, stream);
      assert.equal(second.status, 200, label);
      assert.deepEqual(
        readHeadroom(second),
        {
          daily: String(LIMITS.daily - COST - reservation),
          monthly: String(LIMITS.monthly - COST - reservation),
          total: String(LIMITS.total - COST - reservation),
          balance: String(CREDIT - COST - reservation),
        },
        `${label}: the settled cost and the second request's worst case`,
      );
      await second.text();
    }
  }

  // The test gateway's own key has no limit: no headers at all.
  const chat = FORMATS[0];
  for (const stream of [false, true]) {
    enqueueReply(context, stream);
    const unlimited = await post(context, context.apiKey, chat, stream);
    assert.equal(unlimited.status, 200);
    assert.deepEqual(readHeadroom(unlimited), { daily: null, monthly: null, total: null, balance: null });
    await unlimited.text();
  }

  // An invoiced workspace's balance is not checked: only the limit's header.
  const invoiced = await context.admin.createWorkspace({ name: "headroom invoiced", invoicing: true });
  const { secret } = await context.admin.createKey({
    workspaceId: invoiced.id,
    name: "invoiced",
    monthlyLimitUsd: "2",
  });
  const reservation = Number((await quote(context, secret, chat, false)).reservation_micro_usd);
  enqueueReply(context, false);
  const answer = await post(context, secret, chat, false);
  assert.equal(answer.status, 200);
  assert.deepEqual(readHeadroom(answer), {
    daily: null,
    monthly: String(LIMITS.monthly - reservation),
    total: null,
    balance: null,
  });
  await answer.text();

  // Described on each generation endpoint's answer in /openapi.json.
  const document = (await (await fetch(`${context.url}/openapi.json`)).json()) as {
    paths: Record<string, { post: { responses: { 200: { headers?: Record<string, unknown> } } } }>;
  };
  for (const format of FORMATS) {
    const described = Object.keys(document.paths[format.path].post.responses[200].headers ?? {});
    assert.deepEqual(
      described.map((name) => name.toLowerCase()).sort(),
      Object.values(HEADERS).sort(),
      format.path,
    );
  }
});
