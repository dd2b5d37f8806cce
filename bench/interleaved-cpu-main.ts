/**
 * `node --import tsx bench/interleaved-cpu-main.ts --dirs A,B[,C] [--rounds 10] [--seconds 4]
 * [--warm-start 15] [--scenarios chat-json,…] [--concurrency 16]`: CPU µs per request of the
 * gateways of several checkouts, distributed mode (each its own fresh database, one Redis), all on
 * the target core, driven one after the other in short rounds (order reversed every other round).
 * On a loaded machine the interleaving spreads its drift over every gateway alike, where
 * `npm run bench`'s longer phases let one gateway's phase land in a busier minute than another's;
 * each round's ratio (first ÷ last dir) is printed, so their spread shows the noise.
 * With BENCH_GATEWAY_NODE_OPTIONS="--import $PWD/bench/profile-request-window.mjs" every gateway's
 * profile window (PROFILE_WINDOW_START, PROFILE_WINDOW_COUNT) falls in the same interleaved rounds.
 */
import { stopStartedChildren } from "./child-process.js";
import { HARNESS_CPU, planCpuPinning, TARGET_CPU } from "./cpu-pinning.js";
import {
  type BenchDatabase,
  createBenchDatabase,
  DEFAULT_POSTGRES_ADMIN_URL,
  DEFAULT_REDIS_URL,
} from "./distributed-database.js";
import { type GatewayTarget, startGatewayTarget } from "./gateway-target.js";
import { startUpstreamChild } from "./helper-children.js";
import { runLoad } from "./load-generator.js";
import { readCpuMicros } from "./proc-stats.js";
import { buildScenarioRequest, type ScenarioId } from "./scenarios.js";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

const dirs = option("dirs", "")
  .split(",")
  .filter((dir) => dir !== "");
if (dirs.length === 0) {
  process.stderr.write("--dirs A,B: the checkouts whose gateways are compared\n");
  process.exit(2);
}
const rounds = Math.min(30, Number(option("rounds", "10")));
const roundMs = Math.min(30, Number(option("seconds", "4"))) * 1000;
const warmMs = Math.min(120, Number(option("warm-start", "15"))) * 1000;
const scenarios = option("scenarios", "chat-json").split(",") as ScenarioId[];
const connections = Number(option("concurrency", "16"));
const adminUrl = process.env.BENCH_POSTGRES_ADMIN_URL ?? DEFAULT_POSTGRES_ADMIN_URL;
const redisUrl = process.env.BENCH_REDIS_URL ?? DEFAULT_REDIS_URL;

const plan = planCpuPinning();
const upstream = await startUpstreamChild(plan, HARNESS_CPU, {
  streamTokens: 24,
  slowTokens: 30,
  slowIntervalMs: 100,
});
const databases: BenchDatabase[] = [];
const gateways: GatewayTarget[] = [];

function median(sorted: number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One measured stretch of load on `gateway`: its CPU time and the requests it answered. */
async function drive(gateway: GatewayTarget, scenario: ScenarioId, durationMs: number) {
  const pid = gateway.child.pid as number;
  const request = buildScenarioRequest(scenario, {
    kind: "gateway",
    host: gateway.host,
    port: gateway.port,
    apiKey: gateway.apiKey,
  });
  const before = readCpuMicros(pid) ?? 0;
  const load = await runLoad({
    host: gateway.host,
    port: gateway.port,
    request,
    mode: { kind: "concurrency", connections },
    durationMs,
    requestTimeoutMs: 30_000,
  });
  return { requests: load.completed, errors: load.errors, cpuMicros: (readCpuMicros(pid) ?? 0) - before };
}

try {
  for (const [index, dir] of dirs.entries()) {
    const database = await createBenchDatabase(adminUrl);
    databases.push(database);
    gateways.push(
      await startGatewayTarget({
        name: index === 0 ? "gateway" : "baseline",
        upstreamOrigin: `http://127.0.0.1:${upstream.port}`,
        plan,
        cpu: TARGET_CPU,
        gatewayDir: dir,
        databaseUrl: database.url,
        redisUrl,
      }),
    );
  }
  for (const scenario of scenarios) {
    for (const gateway of gateways) await drive(gateway, scenario, Math.round(warmMs / scenarios.length));
  }
  for (const scenario of scenarios) {
    const totals = dirs.map(() => ({ requests: 0, cpuMicros: 0 }));
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = gateways.map((_, index) => index);
      if (round % 2 === 1) order.reverse();
      const perRequest: number[] = dirs.map(() => 0);
      for (const index of order) {
        const measured = await drive(gateways[index], scenario, roundMs);
        if (measured.errors > 0) process.stdout.write(`${dirs[index]}: ${measured.errors} errors\n`);
        totals[index].requests += measured.requests;
        totals[index].cpuMicros += measured.cpuMicros;
        perRequest[index] = measured.cpuMicros / Math.max(1, measured.requests);
      }
      ratios.push(perRequest[0] / perRequest[dirs.length - 1]);
      const cells = dirs.map((dir, index) => `${dir} ${perRequest[index].toFixed(0)}`).join("  ");
      process.stdout.write(
        `${scenario} round ${round + 1}: ${cells} µs/req; first ÷ last ${ratios[round].toFixed(2)}\n`,
      );
    }
    const overall = dirs.map(
      (dir, index) =>
        `${dir} ${(totals[index].cpuMicros / Math.max(1, totals[index].requests)).toFixed(0)} µs/req (${totals[index].requests} requests)`,
    );
    const sorted = [...ratios].sort((a, b) => a - b);
    process.stdout.write(
      `${scenario}: ${overall.join("  ")}; first ÷ last per round: median ${median(sorted).toFixed(2)}, ${sorted.map((ratio) => ratio.toFixed(2)).join(", ")}\n`,
    );
  }
} finally {
  for (const gateway of gateways) await gateway.stop().catch(() => {});
  await stopStartedChildren().catch(() => {});
  for (const database of databases) await database.drop().catch(() => {});
}
process.exit(0);
