/**
 * The activity log's queries in both storage modes: every filter pages through 5,000 requests
 * (ties at the same microsecond included) with no row lost or repeated, in the listing's order;
 * each filter's query reads an index, however deep the page; latency and error rate per model
 * per bucket match what the rows say.
 */
import assert from "node:assert/strict";
import { forEachStorageMode } from "../../../test/helpers/storage-modes.js";
import type { GenerationFilter } from "../../admin/ports.js";
import type { Store } from "../store.js";
import type { SqlClient } from "./sql-client.js";

const ROWS = 5_000;
const BASE_MICROS = BigInt(Date.parse("2026-11-01T00:00:00Z")) * 1000n;

interface SeedRow {
  id: string;
  micros: bigint;
  key: "k1" | "k2";
  model: string;
  status: "ok" | "error" | "interrupted";
  errorCode: string | null;
  session: string | null;
  latency: number;
}

/** Row i, as the SQL below writes it: four rows per second, two of each pair at the same microsecond. */
function seedRow(i: number): SeedRow {
  const status = i % 50 === 0 ? "error" : i % 97 === 0 ? "interrupted" : "ok";
  return {
    id: `g-${String(i).padStart(5, "0")}`,
    micros: BASE_MICROS + BigInt(Math.floor(i / 4)) * 1_000_000n + (i % 4 < 2 ? 0n : 123n),
    key: i % 3 === 0 ? "k2" : "k1",
    model: i % 10 === 0 ? "rare/model" : i % 2 === 1 ? "a/one" : "b/two",
    status,
    errorCode: status === "error" ? "rate_limited" : null,
    session: i % 100 === 7 ? "sess-1" : null,
    latency: 100 + (i % 1000),
  };
}

async function seed(sql: SqlClient, workspaceId: string, keys: Record<"k1" | "k2", string>) {
  await sql.query(
    `INSERT INTO generations (id, workspace_id, api_key_id, model, ingress_format, source, stream,
       status, error_code, session_id, latency_ms, created_at, finished_at)
     SELECT 'g-' || lpad(i::text, 5, '0'), $1,
       CASE WHEN i % 3 = 0 THEN $3 ELSE $2 END,
       CASE WHEN i % 10 = 0 THEN 'rare/model' WHEN i % 2 = 1 THEN 'a/one' ELSE 'b/two' END,
       'chat_completions', 'api', false,
       CASE WHEN i % 50 = 0 THEN 'error' WHEN i % 97 = 0 THEN 'interrupted' ELSE 'ok' END,
       CASE WHEN i % 50 = 0 THEN 'rate_limited' END,
       CASE WHEN i % 100 = 7 THEN 'sess-1' END,
       100 + i % 1000,
       timestamptz '2026-11-01T00:00:00Z' + (i / 4) * interval '1 second'
         + CASE WHEN i % 4 < 2 THEN interval '0' ELSE interval '123 microseconds' END,
       timestamptz '2026-11-01T00:00:00Z' + (i / 4) * interval '1 second'
     FROM generate_series(0, $4 - 1) AS i`,
    [workspaceId, keys.k1, keys.k2, ROWS],
  );
  await sql.query("ANALYZE generations");
}

async function setUp(store: Store, sql: SqlClient) {
  const workspace = await store.workspaces.create({ name: "busy", creditsMicroUsd: 0, invoicing: false });
  const other = await store.workspaces.create({ name: "other", creditsMicroUsd: 0, invoicing: false });
  const k1 = (await store.apiKeys.create({ workspaceId: workspace.id, name: "k1" })).key.id;
  const k2 = (await store.apiKeys.create({ workspaceId: workspace.id, name: "k2" })).key.id;
  await seed(sql, workspace.id, { k1, k2 });
  // Another workspace's requests at the same times never show.
  await sql.query(
    `INSERT INTO generations (id, workspace_id, api_key_id, model, ingress_format, source, stream, status, created_at)
     SELECT 'x-' || i, $1, 'kx', 'rare/model', 'chat_completions', 'api', false, 'error',
       timestamptz '2026-11-01T00:00:00Z' + i * interval '1 second'
     FROM generate_series(0, 199) AS i`,
    [other.id],
  );
  return { workspaceId: workspace.id, keys: { k1, k2 } };
}

const newestFirst = (a: SeedRow, b: SeedRow) =>
  a.micros === b.micros ? (a.id < b.id ? 1 : -1) : a.micros < b.micros ? 1 : -1;

forEachStorageMode(
  "activity log: every filter pages through 5,000 requests exactly",
  async ({ store, sql }) => {
    const { workspaceId, keys } = await setUp(store, sql);
    const all = Array.from({ length: ROWS }, (_, i) => seedRow(i)).sort(newestFirst);
    const since = new Date("2026-11-01T00:05:00Z");
    const until = new Date("2026-11-01T00:15:00.000Z");
    const cases: Array<[string, Omit<GenerationFilter, "workspaceId">, (row: SeedRow) => boolean]> = [
      ["everything", {}, () => true],
      ["key", { apiKeyId: keys.k2 }, (row) => row.key === "k2"],
      ["model", { model: "rare/model" }, (row) => row.model === "rare/model"],
      ["status", { status: "interrupted" }, (row) => row.status === "interrupted"],
      ["ok status", { status: "ok" }, (row) => row.status === "ok"],
      ["error code", { errorCode: "rate_limited" }, (row) => row.errorCode === "rate_limited"],
      ["session", { sessionId: "sess-1" }, (row) => row.session === "sess-1"],
      [
        "time range",
        { since, until },
        (row) =>
          row.micros >= BigInt(since.getTime()) * 1000n && row.micros < BigInt(until.getTime()) * 1000n,
      ],
      [
        "model and key",
        { model: "a/one", apiKeyId: keys.k1 },
        (row) => row.model === "a/one" && row.key === "k1",
      ],
    ];
    for (const [name, filter, keep] of cases) {
      const expected = all.filter(keep).map((row) => row.id);
      const seen: string[] = [];
      let after: Parameters<Store["reports"]["pageGenerations"]>[1]["after"];
      let pages = 0;
      for (; ; pages++) {
        assert.ok(pages <= ROWS, `${name}: paging does not end`);
        const page = await store.reports.pageGenerations({ workspaceId, ...filter }, { after, limit: 173 });
        seen.push(...page.records.map((record) => record.id));
        if (page.next === null) break;
        after = page.next;
      }
      assert.ok(expected.length > 0, name);
      assert.deepEqual(seen, expected, `${name}: every row once, newest first`);
    }
  },
);

forEachStorageMode(
  "activity log: each filter's page reads an index, however deep",
  async ({ store, sql }) => {
    const { workspaceId, keys } = await setUp(store, sql);
    // A cursor deep into the table: the plan must still start from an index, not scan and sort.
    const deep = { createdAtMicros: BASE_MICROS + 100n * 1_000_000n, id: "g-00400" };
    const cases: Array<[Omit<GenerationFilter, "workspaceId">, RegExp]> = [
      [{}, /generations_workspace_created_idx/],
      [{ apiKeyId: keys.k2 }, /generations_key_created_idx|generations_workspace_created_idx/],
      [{ model: "rare/model" }, /generations_workspace_model_created_idx/],
      [{ status: "interrupted" }, /generations_workspace_status_created_idx/],
      [{ errorCode: "rate_limited" }, /generations_workspace_error_created_idx/],
      [{ sessionId: "sess-1" }, /generations_workspace_session_idx/],
      [{ since: new Date("2026-11-01T00:05:00Z") }, /generations_workspace_created_idx/],
    ];
    for (const [filter, index] of cases) {
      const plan = await explainPage(sql, store, { workspaceId, ...filter }, deep);
      assert.match(plan, index, plan);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
    }
  },
);

/** The plan of the query pageGenerations runs, captured by running it through a recording client. */
async function explainPage(
  sql: SqlClient,
  store: Store,
  filter: GenerationFilter,
  after: { createdAtMicros: bigint; id: string },
): Promise<string> {
  const { createUsageReportRepository } = await import("./usage-report-repository.js");
  let captured: { text: string; params: readonly unknown[] } | undefined;
  const recorder = {
    ...sql,
    query: async (text: string, params?: readonly unknown[]) => {
      captured = { text, params: params ?? [] };
      return [];
    },
  } as unknown as SqlClient;
  await createUsageReportRepository(recorder).pageGenerations(filter, { after, limit: 50 });
  assert.ok(captured, "the query was run");
  void store;
  const rows = await sql.query<{ "QUERY PLAN": string }>(
    `EXPLAIN ${captured.text}`,
    captured.params as Parameters<SqlClient["query"]>[1],
  );
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

forEachStorageMode("activity log: latency and error rate per model and bucket", async ({ store, sql }) => {
  const { workspaceId } = await setUp(store, sql);
  const rows = await store.reports.summarizePerformance({
    workspaceId,
    since: new Date("2026-11-01T00:00:00Z"),
    until: new Date("2026-11-02T00:00:00Z"),
    bucketSeconds: 600,
  });
  // 5,000 rows at four per second: 1,250 s, so buckets at 00:00, 00:10 and 00:20.
  const seeded = Array.from({ length: ROWS }, (_, i) => seedRow(i));
  const bucketOf = (row: SeedRow) => {
    const seconds = Number((row.micros - BASE_MICROS) / 1_000_000n);
    return new Date(Date.parse("2026-11-01T00:00:00Z") + Math.floor(seconds / 600) * 600_000)
      .toISOString()
      .replace(".000Z", "Z");
  };
  const groups = new Map<string, SeedRow[]>();
  for (const row of seeded) {
    const key = `${bucketOf(row)} ${row.model}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const percentile = (sorted: number[], fraction: number) => {
    const position = fraction * (sorted.length - 1);
    const low = Math.floor(position);
    const high = Math.ceil(position);
    return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
  };
  const expected = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, group]) => {
      const [bucket, model] = key.split(" ");
      const ok = group
        .filter((row) => row.status === "ok")
        .map((row) => row.latency)
        .sort((a, b) => a - b);
      return {
        bucket,
        model,
        requests: group.length,
        errors: group.filter((row) => row.status !== "ok").length,
        latencyP50Ms: Math.round(percentile(ok, 0.5)),
        latencyP95Ms: Math.round(percentile(ok, 0.95)),
        latencyMeanMs: Math.round(ok.reduce((sum, value) => sum + value, 0) / ok.length),
      };
    });
  assert.equal(expected.length, 9);
  assert.deepEqual(rows, expected);
});
