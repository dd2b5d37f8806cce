/**
 * Renders a run as markdown: environment, the results table, the gateway against the baseline
 * (`--compare-dir`), the floor ratios, the goals, the streams.
 */
import type { BaselineComparison, FloorRatio, ResultRow } from "./aggregate.js";
import type { SlowStreamsResult } from "./slow-streams.js";
import type { TargetCheck } from "./target-checks.js";

export interface RunEnvironment {
  startedAt: string;
  node: string;
  cpuModel: string;
  cpuCount: number;
  pinning: string;
  storage: string;
  gatewayDir: string;
  /** `--compare-dir`: the checkout whose gateway ran as the `baseline` target. */
  baselineDir?: string;
  loadAverageBefore?: number[];
  loadAverageAfter?: number[];
  options: string;
  profiled: boolean;
  /** `--quick`: a short warm start and 1 s phases. */
  quick: boolean;
  durationS: number;
}

export interface ReportInput {
  environment: RunEnvironment;
  rows: ResultRow[];
  ratios: FloorRatio[];
  /** Gateway against the baseline, per scenario and load; empty without `--compare-dir`. */
  comparison: BaselineComparison[];
  checks: TargetCheck[];
  streams: SlowStreamsResult[];
  failures: string[];
  gatewayErrorLines: string[];
  gatewayErrorCount: number;
  baselineErrorLines?: string[];
  baselineErrorCount?: number;
  profileMarkdown?: string;
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined ? "–" : value.toFixed(digits);
const whole = (value: number | undefined) =>
  value === undefined ? "–" : Math.round(value).toLocaleString("en-US");
const signed = (value: number | undefined, digits: number) =>
  value === undefined ? "–" : `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;

/** Other work on the target's core at or above this share of it makes a row untrustworthy. */
const OTHER_LOAD_NOISY_PERCENT = 10;
/** A load side at or above this share of a core probably limited the run. */
const LOAD_SIDE_SATURATED_PERCENT = 90;

export function renderResultsTable(rows: readonly ResultRow[]): string {
  const lines = [
    "| scenario | load | target | req/s | p50 ms | p99 ms | +p50 vs direct | TTFB p50 ms | +TTFB vs direct | CPU µs/req | target CPU % | other on target core % | load-core CPU % | peak RSS MB | errors |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    const noisy =
      row.otherOnTargetCorePercent !== undefined && row.otherOnTargetCorePercent >= OTHER_LOAD_NOISY_PERCENT
        ? " ⚠"
        : "";
    const saturated =
      row.loadSideCpuPercent !== undefined && row.loadSideCpuPercent >= LOAD_SIDE_SATURATED_PERCENT
        ? " ⚠"
        : "";
    lines.push(
      `| ${row.scenario} | ${row.mode} | ${row.target} | ${whole(row.requestsPerSecond)} | ${fixed(row.latencyMs?.p50, 2)} | ${fixed(row.latencyMs?.p99, 2)} | ${signed(row.addedP50Ms, 2)} | ${fixed(row.ttfbMs?.p50, 2)} | ${signed(row.addedTtfbP50Ms, 2)} | ${whole(row.cpuMicrosPerRequest)} | ${fixed(row.targetCpuPercent, 0)} | ${fixed(row.otherOnTargetCorePercent, 0)}${noisy} | ${fixed(row.loadSideCpuPercent, 0)}${saturated} | ${fixed(row.peakRssMb, 0)} | ${row.errors + row.dropped} |`,
    );
  }
  return lines.join("\n");
}

function renderRatios(ratios: readonly FloorRatio[]): string {
  return [
    "| scenario | load | req/s gateway ÷ floor | CPU/req gateway ÷ floor | p50 gateway − floor ms |",
    "|---|---|---:|---:|---:|",
    ...ratios.map(
      (ratio) =>
        `| ${ratio.scenario} | ${ratio.mode} | ${ratio.mode.endsWith("rps") ? "(fixed rate)" : fixed(ratio.throughput, 2)} | ${fixed(ratio.cpuPerRequest, 1)} | ${signed(ratio.p50DeltaMs, 2)} |`,
    ),
  ].join("\n");
}

export function renderBaselineComparison(comparison: readonly BaselineComparison[]): string {
  return [
    "| scenario | load | req/s gateway ÷ baseline | per round | CPU/req gateway ÷ baseline | p50 gateway − baseline ms | TTFB p50 gateway − baseline ms |",
    "|---|---|---:|---|---:|---:|---:|",
    ...comparison.map(
      (row) =>
        `| ${row.scenario} | ${row.mode} | ${fixed(row.throughput, 3)} | ${row.throughputByRound.length > 0 ? row.throughputByRound.map((ratio) => ratio.toFixed(2)).join(", ") : "–"} | ${fixed(row.cpuPerRequest, 3)} | ${signed(row.p50DeltaMs, 2)} | ${signed(row.ttfbP50DeltaMs, 2)} |`,
    ),
  ].join("\n");
}

function renderChecks(checks: readonly TargetCheck[]): string {
  const mark = (met: boolean | undefined) => (met === undefined ? "not measured" : met ? "yes" : "**no**");
  return [
    "| target | measured | met |",
    "|---|---:|---|",
    ...checks.map(
      (check) =>
        `| ${check.goal} | ${check.measured === undefined ? "–" : `${fixed(check.measured, check.unit === "×" ? 2 : check.unit === "ms" ? 2 : 0)} ${check.unit}`} | ${mark(check.met)}${check.note ? ` (${check.note})` : ""} |`,
    ),
  ].join("\n");
}

function renderStreams(streams: readonly SlowStreamsResult[]): string {
  const lines = [
    "| target | wave | streams ok | errors | stream p50 s | RSS before MB | RSS peak MB | RSS after MB | /healthz p50 ms | p99 ms | max ms | idle /healthz p50 ms |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const run of streams) {
    run.waves.forEach((wave, index) => {
      lines.push(
        `| ${run.target} | ${index + 1} | ${wave.completed} / ${run.streams} | ${wave.errors} | ${fixed(wave.streamLatencyMs && wave.streamLatencyMs.p50 / 1000, 2)} | ${fixed(wave.rssBeforeMb, 0)} | ${fixed(wave.rssPeakMb, 0)} | ${fixed(wave.rssAfterMb, 0)} | ${fixed(wave.probeMs?.p50, 2)} | ${fixed(wave.probeMs?.p99, 2)} | ${fixed(wave.probeMs?.max, 2)} | ${fixed(run.baselineProbeMs?.p50, 2)} |`,
      );
    });
  }
  const verdicts = streams.map((run) =>
    run.bounded === undefined
      ? `- ${run.target}: one wave only, growth not assessed`
      : `- ${run.target}: RSS after the last wave ${signed(run.growthMb, 1)} MB vs after the first → ${run.bounded ? "bounded (no growth beyond noise)" : "**grows** — investigate"}`,
  );
  return [...lines, "", ...verdicts].join("\n");
}

export function renderReport(input: ReportInput): string {
  const env = input.environment;
  const load = (value: number[] | undefined) =>
    value ? value.map((item) => item.toFixed(2)).join(" / ") : "n/a";
  const noisyRows = input.rows.filter(
    (row) => (row.otherOnTargetCorePercent ?? 0) >= OTHER_LOAD_NOISY_PERCENT,
  ).length;
  const busy = noisyRows > 0 || (env.loadAverageBefore?.[0] ?? 0) > 0.5;
  const sections = [
    `# Gateway benchmark, ${env.storage.split(":")[0]} mode, ${env.startedAt}`,
    "",
    `- Node ${env.node}; ${env.cpuCount} × ${env.cpuModel}`,
    `- ${env.pinning}`,
    `- gateway: ${env.gatewayDir}; storage ${env.storage}`,
    ...(env.baselineDir
      ? [
          `- baseline (--compare-dir): ${env.baselineDir}, started like the gateway (same storage mode, its own data, key${env.storage.startsWith("distributed") ? " and database" : ""}) on the same core`,
        ]
      : []),
    `- options: ${env.options}; wall time ${env.durationS.toFixed(0)} s`,
    `- load average (1/5/15 min) before: ${load(env.loadAverageBefore)}; after: ${load(env.loadAverageAfter)}`,
    ...(busy
      ? [
          `- ⚠ The machine was not quiet (1-min load before the run ${load(env.loadAverageBefore?.slice(0, 1))}; ${noisyRows} rows with other work on the target core ≥ ${OTHER_LOAD_NOISY_PERCENT} %): treat these figures as indicative and rerun on a quiet machine.`,
        ]
      : []),
    ...(env.profiled
      ? ["- ⚠ The gateway ran under `--cpu-prof`: its figures are perturbed by the profiler."]
      : []),
    ...(env.quick
      ? [
          "- ⚠ `--quick`: 4 s of warm start split over the scenarios and 1 s phases can leave the gateway partly cold (chat-json at a third of a default run's rate when all three scenarios shared the warm start): a smoke check, not figures to quote or compare.",
        ]
      : []),
    "",
    `direct = the loopback upstream itself (CPU/RSS are the upstream's); proxy = bare Node pass-through (the floor); gateway = full path (key auth, admission, translation, usage record)${env.baselineDir ? "; baseline = the gateway of the --compare-dir checkout, same requests with its own key" : ""}.`,
    "`other on target core %` is CPU time of processes other than the target on the target's core (from /proc/stat): ⚠ at 10 % or more, the machine was not quiet and the row is indicative only.",
    "`load-core CPU %` is the harness + upstream on the other core; ⚠ marks runs where it neared 100 % (the target may have been starved of load, so its req/s is a lower bound).",
    "",
    "## Results",
    "",
    renderResultsTable(input.rows),
    "",
    ...(input.comparison.length > 0
      ? [
          "## Gateway vs baseline (same run)",
          "",
          "The gateway of this run against the baseline gateway (--compare-dir), measured in the same rounds, alternating with the other targets on the same core: below 1 req/s ÷ and above 1 CPU ÷ mean the gateway is slower. `per round` is the req/s ratio of each round on its own: its spread is the noise to judge the overall ratio by. At a fixed rate req/s only differ when one could not keep up. Both gateways stay alive for the whole run, so the idle one shares the target core: its idle CPU (timers, GC) shows in `other on target core %` of every pinned row.",
          "",
          renderBaselineComparison(input.comparison),
          "",
        ]
      : []),
    "## Gateway vs the floor (bare proxy)",
    "",
    renderRatios(input.ratios),
    "",
    "## Targets (gateway, one core)",
    "",
    renderChecks(input.checks),
    "",
  ];
  if (input.streams.length > 0) {
    sections.push(
      "## Concurrent slow streams (a token every 100 ms)",
      "",
      "RSS is read from /proc. The /healthz latency is sent every 50 ms on its own connection during the streams: beyond the idle figure it is event-loop delay.",
      "",
      renderStreams(input.streams),
      "",
    );
  }
  if (input.failures.length > 0)
    sections.push("## Failures", "", ...input.failures.map((line) => `- ${line}`), "");
  const errorKinds = input.rows.filter((row) => Object.keys(row.errorKinds).length > 0);
  if (errorKinds.length > 0) {
    sections.push(
      "## Request errors",
      "",
      ...errorKinds.map(
        (row) => `- ${row.scenario} ${row.mode} ${row.target}: ${JSON.stringify(row.errorKinds)}`,
      ),
      "",
    );
  }
  if (input.gatewayErrorLines.length > 0) {
    sections.push(
      "## Gateway error log lines",
      "",
      `${input.gatewayErrorCount} lines at level error or above (the first ${input.gatewayErrorLines.length} below). Requests abandoned at a drain deadline are client disconnects and may log here.`,
      "",
      "```",
      ...input.gatewayErrorLines.map((line) => line.slice(0, 400)),
      "```",
      "",
    );
  }
  if (input.baselineErrorLines && input.baselineErrorLines.length > 0) {
    sections.push(
      "## Baseline error log lines",
      "",
      `${input.baselineErrorCount ?? input.baselineErrorLines.length} lines at level error or above (the first ${input.baselineErrorLines.length} below).`,
      "",
      "```",
      ...input.baselineErrorLines.map((line) => line.slice(0, 400)),
      "```",
      "",
    );
  }
  if (input.profileMarkdown) sections.push("## Gateway CPU profile (self time)", "", input.profileMarkdown);
  return sections.join("\n");
}
