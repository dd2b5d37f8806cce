/**
 * The performance targets for the gateway's full path on one core, per storage mode
 * (docs/performance.md), checked against a run: ratios to the floor (the bare proxy) measured in
 * the same run, and added latency over the direct path.
 * A goal whose figure was not measured in this run (e.g. `--rates` without 400) says so.
 */
import type { FloorRatio, ResultRow } from "./aggregate.js";
import type { StorageMode } from "./options.js";
import type { SlowStreamsResult } from "./slow-streams.js";

export interface TargetCheck {
  goal: string;
  measured?: number;
  unit: string;
  /** undefined when not measured. */
  met?: boolean;
  note?: string;
}

export function checkTargets(
  rows: readonly ResultRow[],
  ratios: readonly FloorRatio[],
  streams: readonly SlowStreamsResult[],
  concurrencyMode: string,
  storage: StorageMode,
): TargetCheck[] {
  const row = (target: string, scenario: string, mode: string) =>
    rows.find((item) => item.target === target && item.scenario === scenario && item.mode === mode);
  const atLeast = (value: number | undefined, goal: number) =>
    value === undefined ? undefined : value >= goal;
  const atMost = (value: number | undefined, goal: number) =>
    value === undefined ? undefined : value <= goal;
  const rateMode = "400 rps";
  /** At a fixed rate the latency only means "added" if the target kept up; else it is queueing. */
  const sustainedNote = (measured: ResultRow | undefined) => {
    if (!measured) return "run with --rates 400";
    const kept = measured.requestsPerSecond >= 0.95 * 400 && measured.errors + measured.dropped === 0;
    return kept
      ? undefined
      : `not sustained: ${Math.round(measured.requestsPerSecond)} req/s achieved, so this is queueing`;
  };
  const floorRatio = (scenario: string) =>
    ratios.find((ratio) => ratio.scenario === scenario && ratio.mode === concurrencyMode);
  const chatJsonAt400 = row("gateway", "chat-json", rateMode);
  const chatSseAt400 = row("gateway", "chat-sse", rateMode);
  const fastRss = rows.filter((item) => item.target === "gateway" && item.peakRssMb !== undefined);
  const peakRss = fastRss.length > 0 ? Math.max(...fastRss.map((item) => item.peakRssMb!)) : undefined;
  // The tail at fixed concurrency, against the floor's: pauses on the request thread show here.
  const p99Ratio = (scenario: string) => {
    const gateway = row("gateway", scenario, concurrencyMode)?.latencyMs?.p99;
    const floor = row("proxy", scenario, concurrencyMode)?.latencyMs?.p99;
    return gateway === undefined || floor === undefined || floor === 0 ? undefined : gateway / floor;
  };
  const worstP99Ratio = (() => {
    const values = ["chat-json", "chat-sse", "messages-sse"]
      .map(p99Ratio)
      .filter((value): value is number => value !== undefined);
    return values.length > 0 ? Math.max(...values) : undefined;
  })();
  const p99Check: TargetCheck = {
    goal: `p99 ≤ 4× the floor's (${concurrencyMode}, worst scenario)`,
    measured: worstP99Ratio,
    unit: "×",
    met: atMost(worstP99Ratio, 4),
  };
  const streamRun = streams.find((run) => run.target === "gateway");
  const streamPeaks = streamRun?.waves.map((wave) => wave.rssPeakMb).filter((mb) => mb !== undefined) ?? [];
  const streamPeak = streamPeaks.length > 0 ? Math.max(...(streamPeaks as number[])) : undefined;
  const streamsCheck: TargetCheck = {
    goal: "1,000 concurrent streams under 300 MB (peak)",
    measured: streamPeak,
    unit: "MB",
    met: streamRun && streamRun.streams >= 1_000 ? atMost(streamPeak, 300) : undefined,
    note: streamRun && streamRun.streams < 1_000 ? `only ${streamRun.streams} streams run` : undefined,
  };

  if (storage === "distributed") {
    return [
      {
        goal: "≥ 0.35× the floor's req/s, non-streamed chat",
        measured: floorRatio("chat-json")?.throughput,
        unit: "×",
        met: atLeast(floorRatio("chat-json")?.throughput, 0.35),
      },
      {
        goal: "added p50 ≤ 0.6 ms at 400 req/s (non-streamed)",
        measured: chatJsonAt400?.addedP50Ms,
        unit: "ms",
        met: atMost(chatJsonAt400?.addedP50Ms, 0.6),
        note: sustainedNote(chatJsonAt400),
      },
      {
        goal: "added p99 ≤ 10 ms at 400 req/s (non-streamed)",
        measured: chatJsonAt400?.addedP99Ms,
        unit: "ms",
        met: atMost(chatJsonAt400?.addedP99Ms, 10),
        note: sustainedNote(chatJsonAt400),
      },
      {
        goal: "added time to first byte ≤ 1 ms at 400 req/s (streamed)",
        measured: chatSseAt400?.addedTtfbP50Ms,
        unit: "ms",
        met: atMost(chatSseAt400?.addedTtfbP50Ms, 1),
        note: sustainedNote(chatSseAt400),
      },
      { goal: "peak RSS ≤ 180 MB (load runs)", measured: peakRss, unit: "MB", met: atMost(peakRss, 180) },
      p99Check,
      streamsCheck,
    ];
  }
  return [
    {
      goal: "≥ 0.5× the floor's req/s, non-streamed chat",
      measured: floorRatio("chat-json")?.throughput,
      unit: "×",
      met: atLeast(floorRatio("chat-json")?.throughput, 0.5),
    },
    {
      goal: "≥ 0.45× the floor's req/s, streamed chat",
      measured: floorRatio("chat-sse")?.throughput,
      unit: "×",
      met: atLeast(floorRatio("chat-sse")?.throughput, 0.45),
    },
    {
      goal: "CPU per request ≤ 2.5× the floor's (non-streamed)",
      measured: floorRatio("chat-json")?.cpuPerRequest,
      unit: "×",
      met: atMost(floorRatio("chat-json")?.cpuPerRequest, 2.5),
    },
    { goal: "peak RSS ≤ 250 MB (load runs)", measured: peakRss, unit: "MB", met: atMost(peakRss, 250) },
    {
      goal: "added p50 ≤ 0.6 ms at 400 req/s (non-streamed)",
      measured: chatJsonAt400?.addedP50Ms,
      unit: "ms",
      met: atMost(chatJsonAt400?.addedP50Ms, 0.6),
      note: sustainedNote(chatJsonAt400),
    },
    p99Check,
    streamsCheck,
  ];
}
