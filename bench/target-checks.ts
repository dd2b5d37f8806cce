/**
 * The performance targets for the gateway's full path on one core (docs/performance.md), checked
 * against a run.
 * A goal whose figure was not measured in this run (e.g. `--rates` without 400) says so.
 */
import type { FloorRatio, ResultRow } from "./aggregate.js";
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
): TargetCheck[] {
  const gateway = (scenario: string, mode: string) =>
    rows.find((row) => row.target === "gateway" && row.scenario === scenario && row.mode === mode);
  const atLeast = (value: number | undefined, goal: number) =>
    value === undefined ? undefined : value >= goal;
  const atMost = (value: number | undefined, goal: number) =>
    value === undefined ? undefined : value <= goal;
  const rateMode = "400 rps";
  /** At a fixed rate the latency only means "added" if the target kept up; else it is queueing. */
  const sustainedNote = (row: ResultRow | undefined) => {
    if (!row) return "run with --rates 400";
    const kept = row.requestsPerSecond >= 0.95 * 400 && row.errors + row.dropped === 0;
    return kept
      ? undefined
      : `not sustained: ${Math.round(row.requestsPerSecond)} req/s achieved, so this is queueing`;
  };

  const chatJson = gateway("chat-json", concurrencyMode);
  const chatSse = gateway("chat-sse", concurrencyMode);
  const chatJsonAt400 = gateway("chat-json", rateMode);
  const chatSseAt400 = gateway("chat-sse", rateMode);
  const floor = ratios.find((ratio) => ratio.scenario === "chat-json" && ratio.mode === concurrencyMode);
  const fastRss = rows.filter((row) => row.target === "gateway" && row.peakRssMb !== undefined);
  const peakRss = fastRss.length > 0 ? Math.max(...fastRss.map((row) => row.peakRssMb!)) : undefined;
  const streamRun = streams.find((run) => run.target === "gateway");
  const streamPeaks = streamRun?.waves.map((wave) => wave.rssPeakMb).filter((mb) => mb !== undefined) ?? [];
  const streamPeak = streamPeaks.length > 0 ? Math.max(...(streamPeaks as number[])) : undefined;

  return [
    {
      goal: `≥ 4,000 non-streaming chat req/s (${concurrencyMode})`,
      measured: chatJson?.requestsPerSecond,
      unit: "req/s",
      met: atLeast(chatJson?.requestsPerSecond, 4_000),
    },
    {
      goal: "≥ 0.5× the floor (bare proxy), non-streaming",
      measured: floor?.throughput,
      unit: "×",
      met: atLeast(floor?.throughput, 0.5),
    },
    {
      goal: `≥ 2,000 streaming chat req/s (${concurrencyMode})`,
      measured: chatSse?.requestsPerSecond,
      unit: "req/s",
      met: atLeast(chatSse?.requestsPerSecond, 2_000),
    },
    {
      goal: "added median latency ≤ 0.6 ms at 400 req/s (non-streaming)",
      measured: chatJsonAt400?.addedP50Ms,
      unit: "ms",
      met: atMost(chatJsonAt400?.addedP50Ms, 0.6),
      note: sustainedNote(chatJsonAt400),
    },
    {
      goal: "added time to first byte ≤ 1 ms at 400 req/s (streaming)",
      measured: chatSseAt400?.addedTtfbP50Ms,
      unit: "ms",
      met: atMost(chatSseAt400?.addedTtfbP50Ms, 1),
      note: sustainedNote(chatSseAt400),
    },
    {
      goal: "≤ 250 µs CPU per request (non-streaming)",
      measured: chatJson?.cpuMicrosPerRequest,
      unit: "µs",
      met: atMost(chatJson?.cpuMicrosPerRequest, 250),
    },
    {
      goal: "≤ 150 MB RSS (peak over the load runs)",
      measured: peakRss,
      unit: "MB",
      met: atMost(peakRss, 150),
    },
    {
      goal: "1,000 concurrent streams under 300 MB (peak)",
      measured: streamPeak,
      unit: "MB",
      met: streamRun && streamRun.streams >= 1_000 ? atMost(streamPeak, 300) : undefined,
      note: streamRun && streamRun.streams < 1_000 ? `only ${streamRun.streams} streams run` : undefined,
    },
  ];
}
