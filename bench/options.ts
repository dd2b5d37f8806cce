/**
 * Command-line options of `npm run bench`. Every knob has a ceiling so a run stays bounded in
 * time; `--quick` is the under-a-minute variant (also what CI or a smoke run would use).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_POSTGRES_ADMIN_URL, DEFAULT_REDIS_URL } from "./distributed-database.js";
import type { ScenarioId } from "./scenarios.js";

export interface BenchOptions {
  quick: boolean;
  /** Start the gateway under `--cpu-prof` and summarise the profile (figures are then perturbed). */
  profile: boolean;
  /** Pin with taskset when possible (`--no-pin` to compare). */
  pin: boolean;
  /** Another checkout to run the gateway from (its `src/main.ts`); default this one. */
  gatewayDir?: string;
  /**
   * Another checkout whose gateway runs as a fourth target, `baseline`, started like the gateway
   * (same storage mode, same core) and measured in the same rounds: an A/B comparison in one run.
   */
  compareDir?: string;
  /**
   * The storage modes measured, one after the other in this invocation, each against its own
   * floor: embedded (PGlite) and distributed (PostgreSQL + Redis on loopback) by default.
   */
  modes: StorageMode[];
  /** Where distributed mode's fresh database is created and its Redis. */
  distributed: { postgresAdminUrl: string; redisUrl: string };
  rounds: number;
  /**
   * Unmeasured load per target before the first round, split over the selected scenarios: V8's
   * optimised code (and, embedded, PGlite's WebAssembly) is still being compiled during the first
   * tens of seconds of load, which made round 1 of the first scenario 2–3× slower than round 3.
   */
  warmStartMs: number;
  warmupMs: number;
  durationMs: number;
  concurrency: number;
  rates: number[];
  scenarios: ScenarioId[];
  /** Tokens (SSE frames) of a fast streamed answer. */
  streamTokens: number;
  streams: number;
  streamWaves: number;
  slowTokens: number;
  slowIntervalMs: number;
  settleMs: number;
  /**
   * The slow-stream scenario's targets: the gateway, the floor for comparison (not in --quick),
   * and the baseline when `--compare-dir` is given.
   */
  streamTargets: StreamTarget[];
  /** Fixed-rate backlog allowance: max(this, phase length); see LoadSpec.drainTimeoutMs. */
  minDrainMs: number;
  requestTimeoutMs: number;
  /** Hard stop for the whole run. */
  watchdogMs: number;
}

export type StreamTarget = "proxy" | "gateway" | "baseline";
export type StorageMode = "embedded" | "distributed";

const ALL_SCENARIOS: ScenarioId[] = ["chat-json", "chat-sse", "messages-sse"];

export const HELP = `npm run bench -- [options]

  --quick              short run (about a minute): 1 round, 1 s per measurement, one short wave of slow
                       streams against the gateway only (and the baseline with --compare-dir; no
                       growth check)
  --profile            run the gateway under --cpu-prof (bench/results/profiles) and summarise it
                       (never the baseline of --compare-dir)
  --no-pin             do not pin processes to CPUs with taskset
  (default)            both storage modes, one after the other, each against its own floor: embedded
                       (PGlite), then distributed (PostgreSQL + Redis)
  --embedded           embedded mode only
  --distributed        distributed mode only: a fresh database is created via
                       BENCH_POSTGRES_ADMIN_URL (default ${DEFAULT_POSTGRES_ADMIN_URL}) and dropped
                       after; Redis at BENCH_REDIS_URL (default ${DEFAULT_REDIS_URL})
  --rounds N           measurement rounds, targets alternating within each (default 2, max 5)
  --warm-start S       unmeasured load per target before the first round, split over the scenarios
                       (default 12, --quick 4; 0 skips; max 60): the gateway's code is still being
                       optimised during its first tens of seconds of load
  --duration S         seconds measured per target, scenario and load (default 3, max 30)
  --warmup S           unmeasured seconds before each measurement (default 1, max 10)
  --concurrency N      connections of the fixed-concurrency load (default 32, max 512)
  --rates R1,R2        fixed request rates, requests/s (default 400; each max 20000; none: only
                       the fixed-concurrency load)
  --compare-dir DIR    A/B in one run: also run the gateway of another checkout as a fourth target,
                       "baseline", started like the gateway (own data, key and, with --distributed,
                       own database; same core) and measured in the same rounds, scenarios, loads
                       and slow streams; the report adds gateway ÷ baseline ratios. DIR is e.g. a
                       \`git archive HEAD\` extracted to a temp folder with node_modules linked.
                       Both gateways live through the whole run: the idle one shares the target
                       core (its idle CPU shows in "other on target core %")
  --gateway-dir DIR    run the gateway of another checkout instead of this one
  --scenarios A,B      any of ${ALL_SCENARIOS.join(", ")} (default all)
  --streams N          concurrent slow streams (default 1000, 0 skips; max 5000)
  --slow-tokens N      tokens per slow stream, one per 100 ms (default 30; --quick 5)
`;

export function parseBenchOptions(argv: readonly string[]): BenchOptions | { help: string } {
  if (argv.includes("--help") || argv.includes("-h")) return { help: HELP };
  const quick = argv.includes("--quick");
  const options: BenchOptions = {
    quick,
    profile: argv.includes("--profile"),
    pin: !argv.includes("--no-pin"),
    modes:
      argv.includes("--distributed") && !argv.includes("--embedded")
        ? ["distributed"]
        : argv.includes("--embedded") && !argv.includes("--distributed")
          ? ["embedded"]
          : ["embedded", "distributed"],
    distributed: {
      postgresAdminUrl: process.env.BENCH_POSTGRES_ADMIN_URL || DEFAULT_POSTGRES_ADMIN_URL,
      redisUrl: process.env.BENCH_REDIS_URL || DEFAULT_REDIS_URL,
    },
    rounds: quick ? 1 : 2,
    warmStartMs: quick ? 4_000 : 12_000,
    warmupMs: quick ? 300 : 1_000,
    durationMs: quick ? 1_000 : 3_000,
    concurrency: 32,
    rates: [400],
    scenarios: [...ALL_SCENARIOS],
    streamTokens: 24,
    streams: 1_000,
    streamWaves: quick ? 1 : 2,
    slowTokens: quick ? 5 : 30,
    slowIntervalMs: 100,
    settleMs: quick ? 500 : 2_000,
    streamTargets: quick ? ["gateway"] : ["proxy", "gateway"],
    minDrainMs: quick ? 1_000 : 2_000,
    requestTimeoutMs: 30_000,
    watchdogMs: quick ? 150_000 : 480_000,
  };
  const value = (name: string) => {
    const index = argv.indexOf(`--${name}`);
    return index < 0 ? undefined : argv[index + 1];
  };
  const integer = (name: string, min: number, max: number): number | undefined => {
    const text = value(name);
    if (text === undefined) return undefined;
    const parsed = Number(text);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new Error(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
    }
    return parsed;
  };
  options.rounds = integer("rounds", 1, 5) ?? options.rounds;
  options.warmStartMs = (integer("warm-start", 0, 60) ?? options.warmStartMs / 1000) * 1000;
  options.durationMs = (integer("duration", 1, 30) ?? options.durationMs / 1000) * 1000;
  options.warmupMs = (integer("warmup", 0, 10) ?? options.warmupMs / 1000) * 1000;
  options.concurrency = integer("concurrency", 1, 512) ?? options.concurrency;
  options.streams = integer("streams", 0, 5_000) ?? options.streams;
  options.slowTokens = integer("slow-tokens", 1, 300) ?? options.slowTokens;
  const rates = value("rates");
  if (rates === "none") options.rates = [];
  else if (rates !== undefined) {
    options.rates = rates.split(",").map((item) => {
      const rate = Number(item);
      if (!Number.isInteger(rate) || rate < 1 || rate > 20_000) throw new Error(`bad rate "${item}"`);
      return rate;
    });
  }
  const checkout = (name: string): string | undefined => {
    const dir = value(name);
    if (dir === undefined) return undefined;
    if (!existsSync(join(dir, "src/main.ts"))) throw new Error(`--${name}: no src/main.ts in ${dir}`);
    return resolve(dir);
  };
  options.gatewayDir = checkout("gateway-dir");
  options.compareDir = checkout("compare-dir");
  if (options.compareDir) options.streamTargets.push("baseline");
  const scenarios = value("scenarios");
  if (scenarios !== undefined) {
    options.scenarios = scenarios.split(",").map((item) => {
      if (!ALL_SCENARIOS.includes(item as ScenarioId)) throw new Error(`unknown scenario "${item}"`);
      return item as ScenarioId;
    });
  }
  // The longest stream plus everything else must still fit the watchdog, in every mode.
  options.watchdogMs = options.modes.length * Math.max(options.watchdogMs, estimateRunMs(options) * 2);
  return options;
}

/** Rough wall time of one storage mode's run, printed up front and used to size the watchdog. */
export function estimateRunMs(options: BenchOptions): number {
  const loads = 1 + options.rates.length;
  // direct, proxy, gateway, and the baseline gateway with --compare-dir.
  const gateways = options.compareDir ? 2 : 1;
  const targets = 2 + gateways;
  const cells = options.scenarios.length * loads * targets * options.rounds;
  const perCell = options.warmupMs + options.durationMs + 400;
  // A target slower than a fixed rate is given up to max(2 s, phase) to drain its backlog, twice
  // (warm-up and measurement); assume the gateways are that slow (not direct or the proxy).
  const rateDrains =
    gateways *
    options.rates.length *
    options.scenarios.length *
    options.rounds *
    (Math.max(options.minDrainMs, options.warmupMs) + Math.max(options.minDrainMs, options.durationMs));
  const streamMs = options.slowTokens * options.slowIntervalMs;
  // The gateway admits 1,000 streams at a few ms of CPU each: allow 5 s of ramp per wave.
  const streams =
    options.streams === 0
      ? 0
      : options.streamTargets.length * (1_000 + options.streamWaves * (streamMs + options.settleMs + 5_000));
  // Per gateway: its build, PGlite's initdb and migrations (or a fresh database), the admin key.
  const startup = 5_000 + gateways * 10_000;
  const warmStart = targets * (options.warmStartMs + options.scenarios.length * 400);
  return cells * perCell + rateDrains + streams + startup + warmStart;
}
