/**
 * `node --import tsx bench/pglite-settings.ts [--reps 3] [--requests 3000] [--only a,b] [--cpu]`: memory
 * and CPU of file-backed PGlite under candidate Postgres settings (docs/pglite-tuning.md).
 *
 * Every (candidate, repetition) runs in fresh child processes so RSS figures do not mix: one child
 * creates the data folder and migrates (first start: initdb runs), a second reopens it and
 * migrates (every later start), then runs a load shaped like the gateway's request path (per
 * request: `generations.start`, then `finish` = UPDATE + ledger INSERT + balance UPDATE in one
 * transaction), then times statement kinds. Candidates alternate within each repetition, so a
 * noisy neighbour spreads over all of them; the table shows medians over repetitions.
 * `--cpu [--rounds 15]` compares CPU per statement kind with all candidates in one process instead.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { createStore } from "../src/storage/open-store.js";
import { PGLITE_SETTINGS, pgliteOptions, wrapPglite } from "../src/storage/pglite/pglite-client.js";
import { migrate } from "../src/storage/sql/migrate.js";
import type { SqlClient } from "../src/storage/sql/sql-client.js";

interface Candidate {
  name: string;
  /** undefined: PGlite.create(dataDir) exactly as before this tuning. */
  settings?: Record<string, string>;
}

const CANDIDATES: Candidate[] = [
  { name: "pglite-defaults" },
  { name: "gateway", settings: { ...PGLITE_SETTINGS } },
  { name: "sb-32MB", settings: { ...PGLITE_SETTINGS, shared_buffers: "32MB" } },
  { name: "sb-8MB", settings: { ...PGLITE_SETTINGS, shared_buffers: "8MB" } },
  {
    name: "gw+few-backends",
    settings: {
      ...PGLITE_SETTINGS,
      max_connections: "5",
      max_wal_senders: "0",
      autovacuum_worker_slots: "1",
    },
  },
  { name: "gw+no-stats", settings: { ...PGLITE_SETTINGS, track_counts: "off", track_activities: "off" } },
  { name: "gw+fpw-off (unsafe)", settings: { ...PGLITE_SETTINGS, full_page_writes: "off" } },
  { name: "gw+async-commit (unsafe)", settings: { ...PGLITE_SETTINGS, synchronous_commit: "off" } },
];

interface OpenResult {
  openMs: number;
  rssMb: number;
  rssAfterGcMb: number;
  hwmMb: number;
  wasmMb: number;
}

interface LoadResult extends OpenResult {
  loadHwmMb: number;
  loadRssMb: number;
  loadWasmMb: number;
  walMb: number;
  /** CPU µs per operation, by kind. */
  cpu: Record<string, number>;
}

const MB = 1024 * 1024;

function readStatusMb(field: "VmHWM" | "VmRSS"): number {
  const match = readFileSync("/proc/self/status", "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0), so a later read shows the peak from now on. */
function resetPeak(): void {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // Older kernels: the peak then includes start-up.
  }
}

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function directorySizeMb(path: string): number {
  let bytes = 0;
  for (const entry of readdirSync(path)) bytes += statSync(join(path, entry)).size;
  return bytes / MB;
}

async function openMigrated(
  dataDir: string,
  candidate: Candidate,
): Promise<{ db: PGlite; result: OpenResult }> {
  const started = performance.now();
  const db = candidate.settings
    ? await PGlite.create(dataDir, pgliteOptions(candidate.settings))
    : await PGlite.create(dataDir);
  await migrate(wrapPglite(db));
  const openMs = performance.now() - started;
  const rssMb = process.memoryUsage().rss / MB;
  const hwmMb = readStatusMb("VmHWM");
  await settle();
  return {
    db,
    result: {
      openMs,
      rssMb,
      rssAfterGcMb: process.memoryUsage().rss / MB,
      hwmMb,
      wasmMb: db.Module.HEAPU8.byteLength / MB,
    },
  };
}

const OUTCOME = {
  status: "ok" as const,
  errorCode: null,
  upstreamProvider: "bench",
  upstreamModel: "bench-model",
  tokensPrompt: 120,
  tokensCompletion: 480,
  tokensReasoning: 0,
  tokensCachedPrompt: 0,
  tokensCacheWrite: 0,
  costMicroUsd: 37,
  toolCostsMicroUsd: {},
  latencyMs: 850,
  finishReason: "stop",
};

/** CPU µs per call of `fn`, median of `rounds` rounds of `perRound` calls. */
async function cpuPerCall(rounds: number, perRound: number, fn: (i: number) => Promise<unknown>) {
  let i = 0;
  for (let w = 0; w < Math.min(50, perRound); w++) await fn(i++);
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const before = process.cpuUsage();
    for (let n = 0; n < perRound; n++) await fn(i++);
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / perRound);
  }
  return median(samples);
}

/** The statement kinds timed per call; the 100-row INSERT is the shape of a group commit. */
const KINDS = ["SELECT 1", "INSERT 1 row", "tx of 3 statements", "INSERT 100 rows"] as const;
/** Calls per measured round, by kind (a round of each takes roughly the same time). */
const CALLS_PER_ROUND: Record<(typeof KINDS)[number], number> = {
  "SELECT 1": 200,
  "INSERT 1 row": 200,
  "tx of 3 statements": 100,
  "INSERT 100 rows": 20,
};

interface Workload {
  /** One request of today's request path: `generations.start`, then `finish` (a transaction). */
  request(): Promise<void>;
  calls: Record<(typeof KINDS)[number], () => Promise<unknown>>;
}

async function prepareWorkload(client: SqlClient): Promise<Workload> {
  const store = createStore(client, "embedded");
  const workspace = await store.workspaces.create({ name: "bench", creditsMicroUsd: 1e12, invoicing: false });
  const apiKey = await store.apiKeys.create({ workspaceId: workspace.id, name: "bench" });
  let sequence = 0;
  const start = (id: string) =>
    store.generations.start({
      id,
      workspaceId: workspace.id,
      apiKeyId: apiKey.key.id,
      model: "bench-model",
      ingressFormat: "chat_completions",
      source: "api",
      stream: false,
    });
  const batchValues = Array.from({ length: 100 }, (_, row) => {
    const p = row * 4;
    return `($${p + 1}, $${p + 2}, $${p + 3}, 'bench-model', 'chat_completions', 'api', false, 'ok', $${p + 4})`;
  }).join(", ");
  const batchSql = `INSERT INTO generations (id, workspace_id, api_key_id, model, ingress_format, source, stream,
    status, cost_micro_usd) VALUES ${batchValues}`;
  return {
    async request() {
      const id = `gen_load_${sequence++}`;
      await start(id);
      await store.generations.finish(id, OUTCOME);
    },
    calls: {
      "SELECT 1": () => client.query("SELECT 1"),
      "INSERT 1 row": () => start(`gen_one_${sequence++}`),
      "tx of 3 statements": () =>
        client.transaction(async (tx) => {
          await tx.query(
            "INSERT INTO ledger_entries (workspace_id, kind, amount_micro_usd) VALUES ($1, 'credit', $2)",
            [workspace.id, 1],
          );
          await tx.query("UPDATE workspaces SET balance_micro_usd = balance_micro_usd + $2 WHERE id = $1", [
            workspace.id,
            1,
          ]);
          await tx.query("SELECT balance_micro_usd FROM workspaces WHERE id = $1", [workspace.id]);
        }),
      "INSERT 100 rows": () => {
        const params: (string | number)[] = [];
        for (let row = 0; row < 100; row++)
          params.push(`gen_batch_${sequence++}`, workspace.id, apiKey.key.id, 37);
        return client.query(batchSql, params);
      },
    },
  };
}

async function runLoad(db: PGlite, requests: number): Promise<Record<string, number>> {
  const workload = await prepareWorkload(wrapPglite(db));
  for (let n = 0; n < requests; n++) await workload.request();
  const cpu: Record<string, number> = {};
  for (const kind of KINDS) cpu[kind] = await cpuPerCall(5, CALLS_PER_ROUND[kind], workload.calls[kind]);
  return cpu;
}

/**
 * `--cpu`: every candidate open at once in this process (plus the gateway's settings in memory,
 * which shows what the file system costs), warmed by `requests` requests each, then `rounds`
 * rounds that time each kind on each candidate in turn: neighbours' noise and JIT state are
 * shared alike, which separate processes cannot give.
 */
async function cpuComparison(candidates: Candidate[], requests: number, rounds: number): Promise<void> {
  const opened: { name: string; db: PGlite; workload: Workload; dataDir?: string }[] = [];
  const all: (Candidate & { memory?: boolean })[] = [
    ...candidates,
    { name: "gateway, memory://", settings: { ...PGLITE_SETTINGS }, memory: true },
  ];
  for (const candidate of all) {
    const dataDir = candidate.memory ? undefined : mkdtempSync(join(tmpdir(), "pglite-settings-"));
    const target = dataDir ?? "memory://";
    const db = candidate.settings
      ? await PGlite.create(target, pgliteOptions(candidate.settings))
      : await PGlite.create(target);
    await migrate(wrapPglite(db));
    const workload = await prepareWorkload(wrapPglite(db));
    for (let n = 0; n < requests; n++) await workload.request();
    opened.push({ name: candidate.name, db, workload, dataDir });
  }
  const samples = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < opened.length; i++) {
      const { name, workload } = opened[(i + round) % opened.length];
      for (const kind of KINDS) {
        const perCall = await cpuPerCall(1, CALLS_PER_ROUND[kind], workload.calls[kind]);
        samples.set(`${name}\t${kind}`, [...(samples.get(`${name}\t${kind}`) ?? []), perCall]);
      }
    }
  }
  const lines = [
    `CPU µs per call, one process, ${requests} warm-up requests per candidate, median of ${rounds} rounds`,
    "",
    `| setting | ${KINDS.join(" | ")} |`,
    `|---|${KINDS.map(() => "---:").join("|")}|`,
  ];
  for (const { name } of opened) {
    const cells = KINDS.map((kind) => Math.round(median(samples.get(`${name}\t${kind}`) ?? [])));
    lines.push(`| ${name} | ${cells.join(" | ")} |`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  for (const { db, dataDir } of opened) {
    await db.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function child(mode: string, dataDir: string, candidateName: string, requests: number): Promise<void> {
  const candidate = CANDIDATES.find((c) => c.name === candidateName);
  if (!candidate) throw new Error(`unknown candidate ${candidateName}`);
  const { db, result } = await openMigrated(dataDir, candidate);
  if (mode === "fresh") {
    await db.close();
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  resetPeak();
  const cpu = await runLoad(db, requests);
  const loadHwmMb = readStatusMb("VmHWM");
  await settle();
  const load: LoadResult = {
    ...result,
    loadHwmMb,
    loadRssMb: process.memoryUsage().rss / MB,
    loadWasmMb: db.Module.HEAPU8.byteLength / MB,
    walMb: directorySizeMb(join(dataDir, "pg_wal")),
    cpu,
  };
  await db.close();
  process.stdout.write(`${JSON.stringify(load)}\n`);
}

function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function runChild(args: string[]): unknown {
  const answer = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", import.meta.filename, ...args],
    {
      encoding: "utf8",
      timeout: 600_000,
    },
  );
  if (answer.status !== 0) throw new Error(`child ${args.join(" ")} failed: ${answer.stderr}`);
  const lines = answer.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]);
}

function readFlag(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

async function parent(args: string[]): Promise<void> {
  const reps = Number(readFlag(args, "--reps") ?? 3);
  const requests = Number(readFlag(args, "--requests") ?? 3000);
  const only = readFlag(args, "--only")?.split(",");
  const candidates = CANDIDATES.filter((c) => !only || only.includes(c.name));
  if (args.includes("--cpu")) {
    await cpuComparison(candidates, requests, Number(readFlag(args, "--rounds") ?? 15));
    return;
  }
  const fresh = new Map<string, OpenResult[]>();
  const load = new Map<string, LoadResult[]>();
  for (let rep = 0; rep < reps; rep++) {
    // Rotate the order so no candidate always runs first (or right after a heavy one).
    const order = candidates.map((_, i) => candidates[(i + rep) % candidates.length]);
    for (const candidate of order) {
      const dataDir = mkdtempSync(join(tmpdir(), "pglite-settings-"));
      try {
        const first = runChild(["--child", "fresh", dataDir, candidate.name]) as OpenResult;
        const again = runChild([
          "--child",
          "reopen",
          dataDir,
          candidate.name,
          String(requests),
        ]) as LoadResult;
        fresh.set(candidate.name, [...(fresh.get(candidate.name) ?? []), first]);
        load.set(candidate.name, [...(load.get(candidate.name) ?? []), again]);
        process.stderr.write(`rep ${rep + 1}/${reps} ${candidate.name}: ${JSON.stringify(again)}\n`);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  const kinds = KINDS;
  const round = (v: number) => (Number.isFinite(v) ? Math.round(v).toString() : "–");
  const lines = [
    `${reps} repetitions, ${requests} requests of load, medians; RSS in MB, CPU in µs per call`,
    "",
    "| setting | first start: peak RSS / after GC | reopen+migrate: RSS / peak | peak RSS under load | RSS after load | WASM memory MB | pg_wal MB | " +
      kinds.join(" | ") +
      " |",
    `|---|---:|---:|---:|---:|---:|---:|${kinds.map(() => "---:").join("|")}|`,
  ];
  for (const candidate of candidates) {
    const f = fresh.get(candidate.name) ?? [];
    const l = load.get(candidate.name) ?? [];
    const m = (values: number[]) => round(median(values));
    lines.push(
      `| ${candidate.name} | ${m(f.map((r) => r.hwmMb))} / ${m(f.map((r) => r.rssAfterGcMb))} | ` +
        `${m(l.map((r) => r.rssAfterGcMb))} / ${m(l.map((r) => r.hwmMb))} | ${m(l.map((r) => r.loadHwmMb))} | ` +
        `${m(l.map((r) => r.loadRssMb))} | ${m(l.map((r) => r.wasmMb))}→${m(l.map((r) => r.loadWasmMb))} | ` +
        `${m(l.map((r) => r.walMb))} | ${kinds.map((k) => m(l.map((r) => r.cpu[k]))).join(" | ")} |`,
    );
  }
  lines.push("", "Settings:");
  for (const candidate of candidates) {
    lines.push(
      `- ${candidate.name}: ${candidate.settings ? JSON.stringify(candidate.settings) : "PGlite.create(dataDir)"}`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") {
  await child(argv[1], argv[2], argv[3], Number(argv[4] ?? 0));
} else {
  await parent(argv);
}
