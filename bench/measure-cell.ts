/**
 * One measurement: one target, one scenario, one load mode. Warm up (unmeasured, and the first
 * answer is validated), then measure: the target process's CPU time and peak RSS are read from
 * /proc around the measured run, and so is the CPU of the load side (this harness and the
 * upstream, which share the other core) to tell whether that core, not the target, was the limit.
 */
import { type LoadMode, type LoadResult, runLoad } from "./load-generator.js";
import { readCoreBusyMicros, readCpuMicros, readMemory, resetPeakRss } from "./proc-stats.js";
import type { Scenario, TargetEndpoint } from "./scenarios.js";

export interface CellSpec {
  scenario: Scenario;
  target: TargetEndpoint;
  request: Buffer;
  /** The process whose CPU and memory are the target's (the upstream for `direct`). */
  targetPid: number;
  /** The core the target is pinned to (undefined when unpinned, or when the target shares the load core). */
  targetCore?: number;
  /** The upstream's PID: its CPU counts to the load side (it shares a core with this harness). */
  upstreamPid: number;
  mode: LoadMode;
  warmupMs: number;
  durationMs: number;
  requestTimeoutMs: number;
  /** Fixed-rate backlog allowance: max(this, phase length). */
  minDrainMs: number;
  round: number;
}

export interface CellMeasurement {
  spec: CellSpec;
  load: LoadResult;
  /** CPU time of the target process during the measured run, µs (undefined off Linux). */
  targetCpuMicros?: number;
  /**
   * CPU time of this harness plus the upstream during the run, µs: the load side, which shares one
   * core when pinned. Near 100 % of the elapsed time means that core, not the target, was the limit.
   */
  loadSideCpuMicros?: number;
  /** CPU time of everything else on the target's core during the run, µs: a shared machine's noise. */
  otherOnTargetCoreMicros?: number;
  /** VmHWM of the target after the run; per run when the kernel allowed resetting it. */
  peakRssBytes?: number;
  peakRssIsPerRun: boolean;
  rssBytes?: number;
}

export function describeMode(mode: LoadMode): string {
  return mode.kind === "concurrency" ? `${mode.connections} conc` : `${mode.perSecond} rps`;
}

export async function measureCell(spec: CellSpec): Promise<CellMeasurement> {
  const base = {
    host: spec.target.host,
    port: spec.target.port,
    request: spec.request,
    mode: spec.mode,
    requestTimeoutMs: spec.requestTimeoutMs,
  };
  const drain = (phaseMs: number) => Math.max(spec.minDrainMs, phaseMs);
  await runLoad({
    ...base,
    durationMs: spec.warmupMs,
    drainTimeoutMs: drain(spec.warmupMs),
    validate: spec.scenario.validate,
  });

  const peakRssIsPerRun = resetPeakRss(spec.targetPid);
  const targetCpuBefore = readCpuMicros(spec.targetPid);
  const loadSideBefore = readLoadSideCpu(spec.upstreamPid);
  const coreBefore = spec.targetCore === undefined ? undefined : readCoreBusyMicros(spec.targetCore);
  const load = await runLoad({
    ...base,
    durationMs: spec.durationMs,
    drainTimeoutMs: drain(spec.durationMs),
  });
  const coreAfter = spec.targetCore === undefined ? undefined : readCoreBusyMicros(spec.targetCore);
  const targetCpuAfter = readCpuMicros(spec.targetPid);
  const loadSideAfter = readLoadSideCpu(spec.upstreamPid);
  const targetCpuMicros = difference(targetCpuBefore, targetCpuAfter);
  const coreBusy = difference(coreBefore, coreAfter);
  const memory = readMemory(spec.targetPid);
  return {
    spec,
    load,
    targetCpuMicros,
    loadSideCpuMicros: difference(loadSideBefore, loadSideAfter),
    otherOnTargetCoreMicros:
      coreBusy === undefined || targetCpuMicros === undefined
        ? undefined
        : Math.max(0, coreBusy - targetCpuMicros),
    peakRssBytes: memory?.peakRssBytes,
    peakRssIsPerRun,
    rssBytes: memory?.rssBytes,
  };
}

/** This harness (all threads) plus the upstream. */
function readLoadSideCpu(upstreamPid: number): number | undefined {
  const usage = process.cpuUsage();
  const harness = usage.user + usage.system;
  const upstream = readCpuMicros(upstreamPid);
  return upstream === undefined ? undefined : harness + upstream;
}

function difference(before: number | undefined, after: number | undefined): number | undefined {
  return before === undefined || after === undefined ? undefined : after - before;
}
