/**
 * Folds the measurements of all rounds into one row per (scenario, mode, target): samples are
 * merged (percentiles over every request), rates and CPU are totals over totals, and the gateway
 * is compared with the direct path (added latency), with the bare proxy (the floor) and, with
 * `--compare-dir`, with the baseline gateway measured in the same rounds.
 */
import { SampleSet, type Summary } from "./latency-stats.js";
import { type CellMeasurement, describeMode } from "./measure-cell.js";
import type { ScenarioId, TargetKind } from "./scenarios.js";

export interface ResultRow {
  scenario: ScenarioId;
  mode: string;
  target: TargetKind;
  rounds: number;
  completed: number;
  errors: number;
  errorKinds: Record<string, number>;
  dropped: number;
  requestsPerSecond: number;
  requestsPerSecondByRound: number[];
  latencyMs?: Summary;
  ttfbMs?: Summary;
  /** Target process CPU time per completed request, µs. */
  cpuMicrosPerRequest?: number;
  /** Target process CPU time / wall time (100 = one core busy). */
  targetCpuPercent?: number;
  /** Harness + upstream CPU time / wall time: near 100 means the load core was the limit. */
  loadSideCpuPercent?: number;
  /** Other processes' CPU on the target's core / wall time: above ~10 the figures are noisy. */
  otherOnTargetCorePercent?: number;
  peakRssMb?: number;
  /** Gateway/proxy p50 minus direct p50 in the same scenario and mode. */
  addedP50Ms?: number;
  addedTtfbP50Ms?: number;
  /** p99 latency minus the direct path's p99 in the same scenario and load, ms. */
  addedP99Ms?: number;
}

export interface FloorRatio {
  scenario: ScenarioId;
  mode: string;
  /** gateway req/s ÷ proxy req/s */
  throughput?: number;
  /** gateway CPU µs/request ÷ proxy CPU µs/request */
  cpuPerRequest?: number;
  /** gateway p50 − proxy p50, ms */
  p50DeltaMs?: number;
}

/** The gateway against the baseline gateway (`--compare-dir`), same scenario and load, same run. */
export interface BaselineComparison {
  scenario: ScenarioId;
  mode: string;
  /** gateway req/s ÷ baseline req/s, all rounds together */
  throughput?: number;
  /** The same per round (the two alternate within a round): how much the ratio moves by itself. */
  throughputByRound: number[];
  /** gateway CPU µs/request ÷ baseline CPU µs/request */
  cpuPerRequest?: number;
  /** gateway p50 − baseline p50, ms */
  p50DeltaMs?: number;
  /** gateway TTFB p50 − baseline TTFB p50, ms (streams only) */
  ttfbP50DeltaMs?: number;
}

export function aggregate(cells: readonly CellMeasurement[]): ResultRow[] {
  const groups = new Map<string, CellMeasurement[]>();
  for (const cell of cells) {
    const key = `${cell.spec.scenario.id}|${describeMode(cell.spec.mode)}|${cell.spec.target.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  const rows = [...groups.values()].map(foldGroup);
  for (const row of rows) {
    const direct = rows.find(
      (r) => r.scenario === row.scenario && r.mode === row.mode && r.target === "direct",
    );
    if (!direct || row.target === "direct") continue;
    if (row.latencyMs && direct.latencyMs) row.addedP50Ms = row.latencyMs.p50 - direct.latencyMs.p50;
    if (row.ttfbMs && direct.ttfbMs) row.addedTtfbP50Ms = row.ttfbMs.p50 - direct.ttfbMs.p50;
    if (row.latencyMs && direct.latencyMs) row.addedP99Ms = row.latencyMs.p99 - direct.latencyMs.p99;
  }
  return rows;
}

function foldGroup(cells: CellMeasurement[]): ResultRow {
  const first = cells[0].spec;
  const latency = new SampleSet();
  const ttfb = new SampleSet();
  let completed = 0;
  let errors = 0;
  let dropped = 0;
  let elapsedMs = 0;
  let targetCpu: number | undefined = 0;
  let loadCpu: number | undefined = 0;
  let otherCpu: number | undefined = 0;
  let peakRss: number | undefined;
  const errorKinds: Record<string, number> = {};
  for (const cell of cells) {
    latency.addAll(cell.load.latencyMs);
    ttfb.addAll(cell.load.ttfbMs);
    completed += cell.load.completed;
    errors += cell.load.errors;
    dropped += cell.load.dropped;
    elapsedMs += cell.load.elapsedMs;
    for (const [kind, count] of Object.entries(cell.load.errorKinds))
      errorKinds[kind] = (errorKinds[kind] ?? 0) + count;
    targetCpu =
      cell.targetCpuMicros === undefined || targetCpu === undefined
        ? undefined
        : targetCpu + cell.targetCpuMicros;
    loadCpu =
      cell.loadSideCpuMicros === undefined || loadCpu === undefined
        ? undefined
        : loadCpu + cell.loadSideCpuMicros;
    otherCpu =
      cell.otherOnTargetCoreMicros === undefined || otherCpu === undefined
        ? undefined
        : otherCpu + cell.otherOnTargetCoreMicros;
    if (cell.peakRssBytes !== undefined) peakRss = Math.max(peakRss ?? 0, cell.peakRssBytes);
  }
  const elapsedMicros = elapsedMs * 1000;
  return {
    scenario: first.scenario.id,
    mode: describeMode(first.mode),
    target: first.target.kind,
    rounds: cells.length,
    completed,
    errors,
    errorKinds,
    dropped,
    requestsPerSecond: elapsedMs > 0 ? (completed * 1000) / elapsedMs : 0,
    requestsPerSecondByRound: cells.map((cell) => (cell.load.completed * 1000) / cell.load.elapsedMs),
    latencyMs: latency.summarise(),
    ttfbMs: first.scenario.stream ? ttfb.summarise() : undefined,
    cpuMicrosPerRequest: targetCpu !== undefined && completed > 0 ? targetCpu / completed : undefined,
    targetCpuPercent:
      targetCpu !== undefined && elapsedMicros > 0 ? (100 * targetCpu) / elapsedMicros : undefined,
    loadSideCpuPercent:
      loadCpu !== undefined && elapsedMicros > 0 ? (100 * loadCpu) / elapsedMicros : undefined,
    otherOnTargetCorePercent:
      otherCpu !== undefined && elapsedMicros > 0 ? (100 * otherCpu) / elapsedMicros : undefined,
    peakRssMb: peakRss === undefined ? undefined : peakRss / (1024 * 1024),
  };
}

export function computeFloorRatios(rows: readonly ResultRow[]): FloorRatio[] {
  const ratios: FloorRatio[] = [];
  for (const gateway of rows.filter((row) => row.target === "gateway")) {
    const proxy = rows.find(
      (row) => row.target === "proxy" && row.scenario === gateway.scenario && row.mode === gateway.mode,
    );
    if (!proxy) continue;
    ratios.push({
      scenario: gateway.scenario,
      mode: gateway.mode,
      throughput:
        proxy.requestsPerSecond > 0 ? gateway.requestsPerSecond / proxy.requestsPerSecond : undefined,
      cpuPerRequest:
        gateway.cpuMicrosPerRequest !== undefined && proxy.cpuMicrosPerRequest
          ? gateway.cpuMicrosPerRequest / proxy.cpuMicrosPerRequest
          : undefined,
      p50DeltaMs:
        gateway.latencyMs && proxy.latencyMs ? gateway.latencyMs.p50 - proxy.latencyMs.p50 : undefined,
    });
  }
  return ratios;
}

/** One row per scenario and load measured on both the gateway and the baseline; empty without one. */
export function computeBaselineComparison(rows: readonly ResultRow[]): BaselineComparison[] {
  const comparisons: BaselineComparison[] = [];
  for (const gateway of rows.filter((row) => row.target === "gateway")) {
    const baseline = rows.find(
      (row) => row.target === "baseline" && row.scenario === gateway.scenario && row.mode === gateway.mode,
    );
    if (!baseline) continue;
    const rounds = Math.min(
      gateway.requestsPerSecondByRound.length,
      baseline.requestsPerSecondByRound.length,
    );
    const throughputByRound: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const base = baseline.requestsPerSecondByRound[round];
      if (base > 0) throughputByRound.push(gateway.requestsPerSecondByRound[round] / base);
    }
    comparisons.push({
      scenario: gateway.scenario,
      mode: gateway.mode,
      throughput:
        baseline.requestsPerSecond > 0 ? gateway.requestsPerSecond / baseline.requestsPerSecond : undefined,
      throughputByRound,
      cpuPerRequest:
        gateway.cpuMicrosPerRequest !== undefined && baseline.cpuMicrosPerRequest
          ? gateway.cpuMicrosPerRequest / baseline.cpuMicrosPerRequest
          : undefined,
      p50DeltaMs:
        gateway.latencyMs && baseline.latencyMs ? gateway.latencyMs.p50 - baseline.latencyMs.p50 : undefined,
      ttfbP50DeltaMs:
        gateway.ttfbMs && baseline.ttfbMs ? gateway.ttfbMs.p50 - baseline.ttfbMs.p50 : undefined,
    });
  }
  return comparisons;
}
