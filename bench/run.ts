/**
 * `npm run bench`: the gateway side by side with the direct path and a bare Node proxy,
 * and with `--compare-dir` with another checkout's gateway (the baseline). Starts its
 * own upstream, proxy and gateway(s) (embedded mode, temp data folder) as child processes, pins
 * them with taskset, measures every scenario and load with the targets alternating, runs the slow-stream memory scenario, then writes bench/results/ and prints the
 * table. Stops only the processes it started; a watchdog bounds the run.
 */
import { mkdir } from "node:fs/promises";
import { cpus } from "node:os";
import { join } from "node:path";
import { aggregate, computeBaselineComparison, computeFloorRatios } from "./aggregate.js";
import { killStartedChildrenNow, stopStartedChildren } from "./child-process.js";
import { type CpuPlan, HARNESS_CPU, planCpuPinning, TARGET_CPU } from "./cpu-pinning.js";
import { assertLoopbackUrl, type BenchDatabase, createBenchDatabase } from "./distributed-database.js";
import { type GatewayTarget, startGatewayTarget } from "./gateway-target.js";
import { type StartedServer, startProxyChild, startUpstreamChild } from "./helper-children.js";
import { type LoadMode, runLoad } from "./load-generator.js";
import { type CellMeasurement, describeMode, measureCell } from "./measure-cell.js";
import {
  type BenchOptions,
  estimateRunMs,
  parseBenchOptions,
  type StorageMode,
  type StreamTarget,
} from "./options.js";
import { readLoadAverage } from "./proc-stats.js";
import { renderReport } from "./report-markdown.js";
import { buildProbeRequest, buildScenarioRequest, SCENARIOS, type TargetEndpoint } from "./scenarios.js";
import { runSlowStreams, type SlowStreamsResult } from "./slow-streams.js";
import {
  findNewestProfile,
  formatProfileSummary,
  readCpuProfile,
  summariseCpuProfile,
} from "./summarise-profile.js";
import { checkTargets } from "./target-checks.js";
import { createStamp, RESULTS_DIR, writeResults } from "./write-results.js";

interface Target {
  endpoint: TargetEndpoint;
  pid: number;
}

const started = performance.now();
/** Progress on stderr, with the elapsed time, so a slow phase is easy to spot. */
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseBenchOptions>;
  try {
    parsed = parseBenchOptions(process.argv.slice(2));
  } catch (error) {
    log(`bench: ${(error as Error).message} (see npm run bench -- --help)`);
    return 2;
  }
  if ("help" in parsed) {
    process.stdout.write(parsed.help);
    return 0;
  }
  const options = parsed;
  const stamp = createStamp(new Date());
  const plan = planCpuPinning({ disable: !options.pin });
  log(`bench: ${plan.description}; storage modes: ${options.modes.join(", ")}`);
  log(
    `bench: about ${Math.ceil((options.modes.length * estimateRunMs(options)) / 1000)} s (watchdog ${options.watchdogMs / 1000} s)`,
  );
  armWatchdog(options.watchdogMs);
  const reports: ModeReport[] = [];
  for (const mode of options.modes) {
    log(`bench: ${mode} mode`);
    reports.push(await runMode(options, mode, plan, stamp));
  }
  const markdown = reports.map((report) => report.markdown).join("\n\n---\n\n");
  const json = Object.fromEntries(reports.map((report) => [report.mode, report.json]));
  const paths = await writeResults(stamp, { settings: options, modes: json }, markdown);
  process.stdout.write(`\n${markdown}\n`);
  log(`bench: wrote ${paths.markdown} and ${paths.json}`);
  return reports.some((report) => report.failed) ? 1 : 0;
}

interface ModeReport {
  mode: StorageMode;
  markdown: string;
  json: unknown;
  failed: boolean;
}

/** One storage mode's run: its own upstream, floor, gateway (and baseline), rounds and report. */
async function runMode(
  options: BenchOptions,
  mode: StorageMode,
  plan: CpuPlan,
  stamp: string,
): Promise<ModeReport> {
  const distributed = mode === "distributed";
  const startedAt = new Date();
  const loadAverageBefore = readLoadAverage();
  // One folder per run and mode: the gateway writes one profile per thread (main + tsx loader).
  const profileDir = options.profile ? join(RESULTS_DIR, "profiles", `${stamp}-${mode}`) : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });

  let gateway: GatewayTarget | undefined;
  let baseline: GatewayTarget | undefined;
  let upstream: StartedServer | undefined;
  let proxy: StartedServer | undefined;
  let database: BenchDatabase | undefined;
  let baselineDatabase: BenchDatabase | undefined;
  try {
    upstream = await startUpstreamChild(plan, HARNESS_CPU, options);
    const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
    proxy = await startProxyChild(plan, TARGET_CPU, upstreamOrigin);
    if (distributed) {
      assertLoopbackUrl(options.distributed.redisUrl, "BENCH_REDIS_URL");
      database = await createBenchDatabase(options.distributed.postgresAdminUrl);
      // Each gateway gets its own fresh database; they share Redis (their keys carry random ids).
      if (options.compareDir)
        baselineDatabase = await createBenchDatabase(options.distributed.postgresAdminUrl);
    }
    const gatewaySpawnedAt = performance.now();
    gateway = await startGatewayTarget({
      upstreamOrigin,
      plan,
      cpu: TARGET_CPU,
      profileDir,
      gatewayDir: options.gatewayDir,
      databaseUrl: database?.url,
      redisUrl: distributed ? options.distributed.redisUrl : undefined,
    });
    // The baseline's start, next, is idle time in the gateway's profile.
    if (options.compareDir) {
      // Same start as the gateway (build, storage mode, core), never profiled.
      baseline = await startGatewayTarget({
        name: "baseline",
        upstreamOrigin,
        plan,
        cpu: TARGET_CPU,
        gatewayDir: options.compareDir,
        databaseUrl: baselineDatabase?.url,
        redisUrl: distributed ? options.distributed.redisUrl : undefined,
      });
    }
    log(
      `bench: upstream pid ${upstream.child.pid}, proxy pid ${proxy.child.pid}, gateway pid ${gateway.child.pid}${baseline ? `, baseline pid ${baseline.child.pid}` : ""}`,
    );
    const targets: Target[] = [
      { endpoint: { kind: "direct", host: "127.0.0.1", port: upstream.port }, pid: upstream.child.pid },
      { endpoint: { kind: "proxy", host: "127.0.0.1", port: proxy.port }, pid: proxy.child.pid },
      {
        endpoint: { kind: "gateway", host: "127.0.0.1", port: gateway.port, apiKey: gateway.apiKey },
        pid: gateway.child.pid,
      },
    ];
    if (baseline) {
      targets.push({
        endpoint: { kind: "baseline", host: "127.0.0.1", port: baseline.port, apiKey: baseline.apiKey },
        pid: baseline.child.pid,
      });
    }
    const failures: string[] = [];
    await warmStart(options, targets, failures);
    // The gateway's profile leaves out its start and the warm start: neither is steady load.
    const unprofiledMs = Math.round(performance.now() - gatewaySpawnedAt);
    const cells = await measureAll(options, targets, upstream.child.pid, plan.pinned, failures);
    const streamTargets = targets.filter((target) =>
      options.streamTargets.includes(target.endpoint.kind as StreamTarget),
    );
    const streams = options.streams > 0 ? await measureStreams(options, streamTargets, failures) : [];
    const gatewayErrorLines = gateway.child.errorLines();
    const gatewayErrorCount = gateway.child.errorCount();
    const baselineErrorLines = baseline?.child.errorLines();
    const baselineErrorCount = baseline?.child.errorCount();
    const loadAverageAfter = readLoadAverage();

    // Stopped before reporting: --cpu-prof writes its profile on exit.
    await Promise.all([gateway.stop(), baseline?.stop()]);
    gateway = undefined;
    baseline = undefined;
    const profileMarkdown = profileDir ? summariseNewestProfile(profileDir, unprofiledMs) : undefined;

    const rows = aggregate(cells);
    const ratios = computeFloorRatios(rows);
    const comparison = computeBaselineComparison(rows);
    const concurrencyMode = describeMode({ kind: "concurrency", connections: options.concurrency });
    const checks = checkTargets(rows, ratios, streams, concurrencyMode, mode);
    const environment = {
      startedAt: startedAt.toISOString(),
      node: process.version,
      cpuModel: cpus()[0]?.model ?? "unknown CPU",
      cpuCount: cpus().length,
      pinning: plan.description,
      gatewayDir: options.gatewayDir ?? "this checkout",
      baselineDir: options.compareDir,
      storage: distributed
        ? "distributed: PostgreSQL + Redis on loopback (system services, not pinned; their CPU and memory are not in the gateway's figures)"
        : `embedded: PGlite in the gateway process (temp GATEWAY_DATA_DIR; GATEWAY_PGLITE_THREAD=${process.env.GATEWAY_PGLITE_THREAD || "auto"}: auto = the request thread when pinned to one core, else a worker thread), in-process shared state`,
      loadAverageBefore,
      loadAverageAfter,
      options: process.argv.slice(2).join(" ") || "(defaults)",
      profiled: options.profile,
      quick: options.quick,
      durationS: (Date.now() - startedAt.getTime()) / 1000,
    };
    const input = {
      environment,
      rows,
      ratios,
      comparison,
      checks,
      streams,
      failures,
      gatewayErrorLines,
      gatewayErrorCount,
      baselineErrorLines,
      baselineErrorCount,
      profileMarkdown,
    };
    return { mode, markdown: renderReport(input), json: input, failed: failures.length > 0 };
  } finally {
    await Promise.all([gateway?.stop(), baseline?.stop()]);
    await proxy?.child.stop(5_000);
    await upstream?.child.stop(5_000);
    for (const [which, created] of [
      ["", database],
      ["baseline ", baselineDatabase],
    ] as const) {
      await created
        ?.drop()
        .catch((error: Error) => log(`bench: could not drop the ${which}bench database: ${error.message}`));
    }
  }
}

/**
 * Unmeasured load on every target, each selected scenario in turn at the fixed concurrency, before
 * the first round. Like a measurement's own warm-up: the first answer is validated, and only a
 * load that had to stop (wrong answer, target unreachable) is a failure; stray errors are not.
 */
async function warmStart(options: BenchOptions, targets: Target[], failures: string[]): Promise<void> {
  if (options.warmStartMs === 0) return;
  const scenarios = SCENARIOS.filter((item) => options.scenarios.includes(item.id));
  const perScenarioMs = Math.max(500, Math.round(options.warmStartMs / scenarios.length));
  log(`bench: warm start: ${options.warmStartMs / 1000} s of unmeasured load per target`);
  for (const target of targets) {
    for (const scenario of scenarios) {
      try {
        await runLoad({
          host: target.endpoint.host,
          port: target.endpoint.port,
          request: buildScenarioRequest(scenario.id, target.endpoint),
          mode: { kind: "concurrency", connections: options.concurrency },
          requestTimeoutMs: options.requestTimeoutMs,
          durationMs: perScenarioMs,
          drainTimeoutMs: Math.max(options.minDrainMs, perScenarioMs),
          validate: scenario.validate,
        });
      } catch (error) {
        failures.push(`warm start ${scenario.id} ${target.endpoint.kind}: ${(error as Error).message}`);
      }
    }
  }
}

/**
 * Every scenario × load × round, the targets alternating (order reversed every other round): three,
 * or four with the baseline, which then sits next to the gateway in every round.
 */
async function measureAll(
  options: BenchOptions,
  targets: Target[],
  upstreamPid: number,
  pinned: boolean,
  failures: string[],
): Promise<CellMeasurement[]> {
  const modes: LoadMode[] = [
    { kind: "concurrency", connections: options.concurrency },
    ...options.rates.map((perSecond): LoadMode => ({ kind: "rate", perSecond })),
  ];
  const cells: CellMeasurement[] = [];
  for (const scenario of SCENARIOS.filter((item) => options.scenarios.includes(item.id))) {
    for (const mode of modes) {
      for (let round = 0; round < options.rounds; round += 1) {
        const order = round % 2 === 0 ? targets : [...targets].reverse();
        for (const target of order) {
          const label = `${scenario.id} ${describeMode(mode)} ${target.endpoint.kind} r${round + 1}`;
          try {
            const cell = await measureCell({
              scenario,
              target: target.endpoint,
              request: buildScenarioRequest(scenario.id, target.endpoint),
              targetPid: target.pid,
              // The direct target (the upstream) shares the load core: no separate core to watch.
              targetCore: pinned && target.endpoint.kind !== "direct" ? TARGET_CPU : undefined,
              upstreamPid,
              mode,
              warmupMs: options.warmupMs,
              durationMs: options.durationMs,
              requestTimeoutMs: options.requestTimeoutMs,
              minDrainMs: options.minDrainMs,
              round,
            });
            cells.push(cell);
            const p50 = cell.load.latencyMs.summarise()?.p50;
            const rps = (cell.load.completed * 1000) / cell.load.elapsedMs;
            log(
              `  ${label}: ${rps.toFixed(0)} req/s, p50 ${p50?.toFixed(2) ?? "–"} ms, errors ${cell.load.errors}`,
            );
          } catch (error) {
            failures.push(`${label}: ${(error as Error).message}`);
            log(`  ${label}: FAILED ${(error as Error).message}`);
          }
        }
      }
    }
  }
  return cells;
}

async function measureStreams(
  options: BenchOptions,
  targets: Target[],
  failures: string[],
): Promise<SlowStreamsResult[]> {
  const results: SlowStreamsResult[] = [];
  const chatSse = SCENARIOS.find((scenario) => scenario.id === "chat-sse")!;
  for (const target of targets) {
    try {
      log(`  slow streams: ${options.streams} × ${target.endpoint.kind} (${options.streamWaves} waves)`);
      const result = await runSlowStreams({
        target: target.endpoint,
        pid: target.pid,
        request: buildScenarioRequest("chat-sse", target.endpoint, true),
        probeRequest: buildProbeRequest(target.endpoint),
        streams: options.streams,
        waves: options.streamWaves,
        streamMs: options.slowTokens * options.slowIntervalMs,
        settleMs: options.settleMs,
        baselineMs: options.quick ? 500 : 1_000,
        validate: chatSse.validate,
      });
      results.push(result);
      for (const wave of result.waves) {
        log(
          `    ok ${wave.completed}, errors ${wave.errors}, RSS peak ${wave.rssPeakMb?.toFixed(0)} MB, after ${wave.rssAfterMb?.toFixed(0)} MB, /healthz p99 ${wave.probeMs?.p99.toFixed(1)} ms`,
        );
      }
    } catch (error) {
      failures.push(`slow streams ${target.endpoint.kind}: ${(error as Error).message}`);
    }
  }
  return results;
}

/**
 * Leaves out the gateway's first `unprofiledMs` (spawn to ready, key created, then the warm start):
 * start-up and code still being optimised are not steady load.
 */
function summariseNewestProfile(profileDir: string, unprofiledMs: number): string | undefined {
  const path = findNewestProfile(profileDir);
  if (!path) return "No profile was written (did the gateway exit cleanly?).";
  const summary = formatProfileSummary(summariseCpuProfile(readCpuProfile(path), 25, unprofiledMs), path);
  return `The gateway's first ${unprofiledMs} ms (its start and the warm start) are left out.\n\n${summary}`;
}

function armWatchdog(limitMs: number): void {
  const timer = setTimeout(() => {
    log(`bench: watchdog: still running after ${limitMs / 1000} s, stopping the children and exiting`);
    void stopStartedChildren(3_000).finally(() => process.exit(2));
  }, limitMs);
  timer.unref();
}

process.once("SIGINT", () => {
  log("bench: interrupted, stopping the children");
  void stopStartedChildren(3_000).finally(() => process.exit(130));
});
process.once("exit", killStartedChildrenNow);

main().then(
  (code) => process.exit(code),
  async (error: Error) => {
    log(`bench: ${error.stack ?? error.message}`);
    await stopStartedChildren(3_000);
    process.exit(1);
  },
);
