/**
 * The admin API behind the console's activity log and providers page, on a real gateway in both
 * runtime modes: the request list filtered by key, model, status, error code, session and time,
 * paged with cursors through 1,500 requests with no row lost or repeated; the CSV export of the
 * same filter (header, RFC 4180 quoting, formula cells defused, every row); latency percentiles
 * and error rates per model and day as the rows say; and each route's key status and breaker state,
 * per instance (two instances sharing PostgreSQL and Redis see each other's breakers).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { buildConfig } from "../../src/config/load-config.js";
import type { GenerationStart } from "../../src/engine/generation-record.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/logging/logger.js";
import { IN_MEMORY_DATA_DIR } from "../../src/storage/open-store.js";
import { buildChatCompletion, fakeReply, startFakeOpenAiUpstream } from "../helpers/fake-openai-upstream.js";
import { createTestOutcome } from "../helpers/generation-records.js";
import { createOpenApiValidator } from "../helpers/openapi-schema-validator.js";
import { createTestDatabase, requireMode, TEST_REDIS_URL } from "../helpers/storage-modes.js";
import {
  createTestConfigFile,
  forEachGatewayMode,
  OTHER_MODEL,
  TEST_MODEL,
  type TestGateway,
} from "../helpers/test-gateway.js";

// biome-ignore lint/suspicious/noExplicitAny: wire bodies read field by field.
type Json = any;

const ROWS = 1_500;
const DAY_MS = 86_400_000;
/** A session id a spreadsheet would run, with a quote, a comma and a line break in it. */
const NASTY_SESSION = '=HYPERLINK("http://x", "a,b")\nline two';

async function getAdmin(url: string, secret: string, path: string) {
  const response = await fetch(`${url}/internal/admin${path}`, { headers: { "X-Internal-Token": secret } });
  return { status: response.status, body: (await response.json()) as Json };
}

/** RFC 4180 rows (quoted fields may hold commas, doubled quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\r" && text[index + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      index++;
    } else field += char;
  }
  assert.equal(field + row.join(""), "", "the CSV ends with a complete row");
  return rows;
}

interface Seeded {
  id: string;
  at: number;
  keyId: string;
  model: string;
  status: "ok" | "error";
  errorCode: string | null;
  sessionId: string | null;
  latencyMs: number;
}

/** ROWS requests over the last three days, written as the engine writes usage records. */
async function seed(context: TestGateway, otherKeyId: string): Promise<Seeded[]> {
  const now = Date.now();
  const rows: Seeded[] = Array.from({ length: ROWS }, (_, i) => ({
    id: `act-${String(i).padStart(5, "0")}`,
    // Several requests share each millisecond: the cursor must tell them apart.
    at: now - 3 * DAY_MS + Math.floor(i / 3) * 300_000,
    keyId: i % 4 === 0 ? otherKeyId : context.keyId,
    model: i % 5 === 0 ? OTHER_MODEL : TEST_MODEL,
    status: i % 25 === 0 ? ("error" as const) : ("ok" as const),
    errorCode: i % 25 === 0 ? (i % 50 === 0 ? "provider_rate_limit" : "provider_unavailable") : null,
    sessionId: i % 60 === 1 ? NASTY_SESSION : i % 60 === 2 ? "plain-session" : null,
    latencyMs: 100 + ((i * 37) % 900),
  })).filter((row) => row.at <= now);
  for (let offset = 0; offset < rows.length; offset += 250) {
    await Promise.all(
      rows.slice(offset, offset + 250).map((row) => {
        const start: GenerationStart = {
          id: row.id,
          workspaceId: context.workspaceId,
          apiKeyId: row.keyId,
          model: row.model,
          ingressFormat: "chat_completions",
          source: "api",
          stream: false,
          createdAt: new Date(row.at),
          ...(row.sessionId === null ? {} : { sessionId: row.sessionId, client: "+cli/1.0" }),
        };
        return context.gateway.store.generations.finish(
          row.id,
          createTestOutcome({
            status: row.status,
            errorCode: row.errorCode,
            latencyMs: row.latencyMs,
            costMicroUsd: 7,
          }),
          start,
        );
      }),
    );
  }
  return rows.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
}

forEachGatewayMode("admin API: activity log, CSV export and performance", async (context, t) => {
  const secret = context.gateway.internalSecret;
  const other = await context.admin.createKey({ workspaceId: context.workspaceId, name: "other" });
  const rows = await seed(context, other.key.id);
  const validator = createOpenApiValidator(await (await fetch(`${context.url}/openapi.json`)).json());
  const base = `/workspaces/${context.workspaceId}`;

  /** Every id the listing returns for `query`, page after page. */
  const pageThrough = async (query: string, limit = 200) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; ; pages++) {
      assert.ok(pages <= ROWS, "paging ends");
      const { status, body } = await getAdmin(
        context.url,
        secret,
        `${base}/generations?limit=${limit}&${query}${cursor ? `&cursor=${cursor}` : ""}`,
      );
      assert.equal(status, 200, JSON.stringify(body));
      if (pages === 0) assert.deepEqual(validator.validate("AdminGeneration", body.data[0] ?? {}), []);
      ids.push(...body.data.map((row: Json) => row.id));
      cursor = body.next_cursor;
      if (cursor === null) return ids;
    }
  };

  await t.test("each filter pages through its rows exactly, newest first", async () => {
    const sinceAt = rows[Math.floor(rows.length / 2)].at;
    const untilAt = rows[Math.floor(rows.length / 4)].at;
    const cases: Array<[string, (row: Seeded) => boolean]> = [
      ["", () => true],
      [`key_id=${other.key.id}`, (row) => row.keyId === other.key.id],
      [`model=${encodeURIComponent(OTHER_MODEL)}`, (row) => row.model === OTHER_MODEL],
      ["status=error", (row) => row.status === "error"],
      ["error_code=provider_rate_limit", (row) => row.errorCode === "provider_rate_limit"],
      [`session_id=${encodeURIComponent(NASTY_SESSION)}`, (row) => row.sessionId === NASTY_SESSION],
      [
        `since=${new Date(sinceAt).toISOString()}&until=${new Date(untilAt).toISOString()}`,
        (row) => row.at >= sinceAt && row.at < untilAt,
      ],
      [
        `model=${encodeURIComponent(TEST_MODEL)}&status=ok&key_id=${context.keyId}`,
        (row) => row.model === TEST_MODEL && row.status === "ok" && row.keyId === context.keyId,
      ],
    ];
    for (const [query, keep] of cases) {
      const expected = rows.filter(keep).map((row) => row.id);
      assert.ok(expected.length > 0, query);
      assert.deepEqual(await pageThrough(query, query === "" ? 200 : 97), expected, query || "no filter");
    }
  });

  await t.test("bad filters are refused naming the parameter", async () => {
    for (const [query, param] of [
      ["status=fine", "status"],
      ["since=yesterday", "since"],
      ["since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z", "since"],
      ["cursor=not-a-cursor!", "cursor"],
      [`cursor=${Buffer.from("garbage").toString("base64url")}`, "cursor"],
      ["limit=0", "limit"],
    ]) {
      const { status, body } = await getAdmin(context.url, secret, `${base}/generations?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.error.param, param, query);
    }
    const refused = await fetch(`${context.url}/internal/admin${base}/generations.csv`);
    assert.equal(refused.status, 401);
  });

  await t.test("CSV: the filtered rows, quoted, formulas defused", async () => {
    const response = await fetch(`${context.url}/internal/admin${base}/generations.csv?status=ok`, {
      headers: { "X-Internal-Token": secret },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/csv; charset=utf-8/);
    assert.match(response.headers.get("content-disposition") ?? "", /^attachment; filename="requests-/);
    const [header, ...body] = parseCsv(await response.text());
    assert.deepEqual(header.slice(0, 6), [
      "id",
      "created_at",
      "finished_at",
      "api_key_id",
      "model",
      "status",
    ]);
    const expected = rows.filter((row) => row.status === "ok");
    assert.deepEqual(
      body.map((cells) => cells[0]),
      expected.map((row) => row.id),
    );
    const column = (name: string) => header.indexOf(name);
    const nasty = body.find((cells) => cells[column("session_id")].includes("HYPERLINK"));
    assert.ok(nasty, "a row with the nasty session id");
    // The exact value, behind a quote that keeps a spreadsheet from running it.
    assert.equal(nasty[column("session_id")], `'${NASTY_SESSION}`);
    assert.equal(nasty[column("client")], "'+cli/1.0");
    const first = body[0];
    assert.equal(first[column("created_at")], new Date(expected[0].at).toISOString());
    assert.equal(first[column("latency_ms")], String(expected[0].latencyMs));
    assert.equal(first[column("cost_micro_usd")], "7");
  });

  await t.test("performance: p50, p95, mean latency and error rate per model and day", async () => {
    const { status, body } = await getAdmin(context.url, secret, `${base}/performance?days=5`);
    assert.equal(status, 200);
    assert.deepEqual(validator.validate("AdminModelPerformance", body), []);
    const percentile = (sorted: number[], fraction: number) => {
      const position = fraction * (sorted.length - 1);
      const low = Math.floor(position);
      return sorted[low] + (sorted[Math.ceil(position)] - sorted[low]) * (position - low);
    };
    const groups = new Map<string, Seeded[]>();
    for (const row of rows) {
      const key = `${new Date(row.at).toISOString().slice(0, 10)}T00:00:00Z ${row.model}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    const expected = [...groups.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, group]) => {
        const [bucket, model] = key.split(" ");
        const ok = group.filter((row) => row.status === "ok").map((row) => row.latencyMs);
        ok.sort((a, b) => a - b);
        const errors = group.length - ok.length;
        return {
          bucket,
          model,
          requests: group.length,
          errors,
          error_rate: errors / group.length,
          latency_p50_ms: Math.round(percentile(ok, 0.5)),
          latency_p95_ms: Math.round(percentile(ok, 0.95)),
          latency_mean_ms: Math.round(ok.reduce((sum, value) => sum + value, 0) / ok.length),
        };
      });
    assert.deepEqual(body.data, expected);
    const hourly = await getAdmin(context.url, secret, `${base}/performance?days=30&bucket=hour`);
    assert.equal(hourly.status, 400);
    assert.equal(hourly.body.error.param, "bucket");
  });
});

/** The test catalog with a second route for TEST_MODEL whose provider's key is not set. */
function routesConfig(upstreamBaseUrl: string, leaseSeconds = 60) {
  const file = createTestConfigFile(upstreamBaseUrl) as Json;
  file.providers.push({
    id: "spare",
    kind: "openai-compatible",
    base_url: upstreamBaseUrl,
    api_key_env: "HI_TEST_SPARE_KEY_NEVER_SET",
  });
  file.models[0].routes.push({ provider: "spare", model: "spare-model" });
  file.routing = { retries: 0, breaker_failures: 2, breaker_cooldown_seconds: 600 };
  file.limits = { instance_lease_seconds: leaseSeconds };
  return file;
}

/** Two failed requests in a row open the route's breaker on the instance that served them. */
async function tripBreaker(url: string, apiKey: string, upstream: { enqueue: (reply: Json) => void }) {
  for (let i = 0; i < 2; i++) {
    upstream.enqueue(fakeReply.error(500, { error: { message: "down" } }));
    const response = await fetch(`${url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    await response.arrayBuffer();
    assert.ok(response.status >= 500, `request ${i} failed upstream (${response.status})`);
  }
}

const routeOf = (body: Json, model: string, provider: string) =>
  body.models.find((m: Json) => m.slug === model).routes.find((r: Json) => r.provider === provider);

forEachGatewayMode(
  "admin API: routes with their key status and breaker states",
  async (context) => {
    const secret = context.gateway.internalSecret;
    const before = await getAdmin(context.url, secret, "/routes");
    assert.equal(before.status, 200);
    const validator = createOpenApiValidator(await (await fetch(`${context.url}/openapi.json`)).json());
    assert.deepEqual(validator.validate("AdminRoutes", before.body), []);
    assert.equal(before.body.instances.length, 1);
    const self = before.body.instance_id;
    assert.deepEqual(routeOf(before.body, TEST_MODEL, "fake"), {
      provider: "fake",
      provider_kind: "openai-compatible",
      upstream_model: "fake-upstream-model",
      key_variable: "FAKE_UPSTREAM_KEY",
      key_set: true,
      breakers: [{ instance_id: self, state: "closed" }],
    });
    assert.equal(routeOf(before.body, TEST_MODEL, "spare").key_set, false);
    // The key itself is never in the answer.
    assert.doesNotMatch(JSON.stringify(before.body), /sk-upstream-secret/);

    await tripBreaker(context.url, context.apiKey, context.upstream);
    const after = await getAdmin(context.url, secret, "/routes");
    assert.deepEqual(routeOf(after.body, TEST_MODEL, "fake").breakers, [
      { instance_id: self, state: "open" },
    ]);
    assert.equal(routeOf(after.body, OTHER_MODEL, "fake").breakers[0].state, "closed");
  },
  { configOverrides: (upstream) => routesConfig(upstream) },
);

test("admin API: two instances show each other's breaker states [distributed]", async (t) => {
  if (!(await requireMode(t, "postgres")) || !(await requireMode(t, "redis"))) return;
  const upstream = await startFakeOpenAiUpstream();
  upstream.setHandler(() => fakeReply.json(buildChatCompletion({})));
  const database = await createTestDatabase();
  const secret = `test-secret-${randomBytes(8).toString("hex")}`;
  const statePrefix = `test:${randomBytes(6).toString("hex")}:`;
  // A 2 s lease: each instance publishes its breakers every third of a second.
  const config = buildConfig(routesConfig(upstream.baseUrl, 2), { FAKE_UPSTREAM_KEY: "sk-upstream-secret" });
  const start = () =>
    startGateway({
      settings: {
        port: 0,
        host: "127.0.0.1",
        databaseUrl: database.url,
        redisUrl: TEST_REDIS_URL,
        dataDir: IN_MEMORY_DATA_DIR,
        configPath: "(test)",
        internalSharedSecret: secret,
        logLevel: "silent",
      },
      config,
      logger: createLogger("silent"),
      drainMs: 200,
      statePrefix,
    });
  const gateways: RunningGateway[] = [];
  try {
    gateways.push(await start(), await start());
    const [first, second] = gateways;
    const workspace = await first.admin.createWorkspace({ name: "two", creditsUsd: "5" });
    const { secret: apiKey } = await first.admin.createKey({ workspaceId: workspace.id });
    await tripBreaker(first.url, apiKey, upstream);

    // Asked on the second instance: its own route closed, the first's open.
    const deadline = Date.now() + 5_000;
    let breakers: Json[] = [];
    let firstId = "";
    for (;;) {
      const firstAnswer = await getAdmin(first.url, secret, "/routes");
      firstId = firstAnswer.body.instance_id;
      const { body } = await getAdmin(second.url, secret, "/routes");
      breakers = routeOf(body, TEST_MODEL, "fake").breakers;
      const seen = breakers.find((breaker) => breaker.instance_id === firstId);
      if (seen?.state === "open") {
        assert.equal(body.instances.length, 2);
        assert.notEqual(body.instance_id, firstId);
        assert.deepEqual(breakers, [
          { instance_id: body.instance_id, state: "closed" },
          { instance_id: firstId, state: "open" },
        ]);
        break;
      }
      assert.ok(
        Date.now() < deadline,
        `the first instance's open breaker never showed: ${JSON.stringify(breakers)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // An instance that stops takes its report with it.
    await first.close();
    gateways.shift();
    const { body } = await getAdmin(second.url, secret, "/routes");
    assert.deepEqual(
      body.instances.map((instance: Json) => instance.instance_id),
      [body.instance_id],
    );
  } finally {
    for (const gateway of gateways) await gateway.close();
    await upstream.close();
    await database.drop();
  }
});
