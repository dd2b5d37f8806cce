/**
 * Memory and responsiveness under many concurrent slow streams: N clients each
 * hold a stream open while the upstream sends a token every 100 ms. The target exposes no
 * metrics, so everything is measured from outside:
 * - memory: RSS from /proc before, at peak (sampled, and VmHWM) and after the streams end;
 * - event-loop delay: the latency of `GET /healthz` sent every 50 ms on a separate connection
 *   during the run. A health check does almost no work, so its latency beyond the idle baseline
 *   is time spent waiting for the event loop — the responsiveness figure.
 * Several waves run back to back; RSS after the last wave against RSS after the first tells
 * whether anything grows without bound.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { HttpConnection } from "./http-connection.js";
import { SampleSet, type Summary } from "./latency-stats.js";
import { bytesToMb, readMemory, resetPeakRss } from "./proc-stats.js";
import type { TargetKind } from "./scenarios.js";

export interface SlowStreamsSpec {
  target: { kind: TargetKind; host: string; port: number };
  pid: number;
  request: Buffer;
  probeRequest: Buffer;
  streams: number;
  waves: number;
  /** Expected stream length (tokens × interval); the per-stream timeout adds a margin to it. */
  streamMs: number;
  settleMs: number;
  /** How long the idle /healthz baseline is probed before the first wave (default 1 s). */
  baselineMs?: number;
  validate?: (body: string) => string | undefined;
}

export interface WaveResult {
  completed: number;
  errors: number;
  errorKinds: Record<string, number>;
  durationMs: number;
  streamLatencyMs?: Summary;
  rssBeforeMb?: number;
  rssPeakMb?: number;
  rssAfterMb?: number;
  probeMs?: Summary;
  probeFailures: number;
}

export interface SlowStreamsResult {
  target: TargetKind;
  streams: number;
  baselineRssMb?: number;
  baselineProbeMs?: Summary;
  waves: WaveResult[];
  /** RSS after the last wave minus RSS after the first, MB. */
  growthMb?: number;
  /** true when the growth stays within the tolerance below. */
  bounded?: boolean;
}

const RAMP_BATCH = 100;
const RAMP_INTERVAL_MS = 20;
const PROBE_INTERVAL_MS = 50;
const RSS_SAMPLE_MS = 100;
/** Allowed growth between the first and the last wave: heap sizing noise, not a leak. */
const GROWTH_TOLERANCE = { fraction: 0.15, mb: 16 };

export async function runSlowStreams(spec: SlowStreamsSpec): Promise<SlowStreamsResult> {
  const baselineProbe = await probeFor(spec, spec.baselineMs ?? 1_000);
  const result: SlowStreamsResult = {
    target: spec.target.kind,
    streams: spec.streams,
    baselineRssMb: rssMb(spec.pid),
    baselineProbeMs: baselineProbe.samples.summarise(),
    waves: [],
  };
  for (let wave = 0; wave < spec.waves; wave += 1) result.waves.push(await runWave(spec, wave === 0));
  const first = result.waves[0]?.rssAfterMb;
  const last = result.waves[result.waves.length - 1]?.rssAfterMb;
  if (first !== undefined && last !== undefined && result.waves.length > 1) {
    result.growthMb = last - first;
    result.bounded = last <= first * (1 + GROWTH_TOLERANCE.fraction) + GROWTH_TOLERANCE.mb;
  }
  return result;
}

async function runWave(spec: SlowStreamsSpec, validateFirst: boolean): Promise<WaveResult> {
  const rssBeforeMb = rssMb(spec.pid);
  const hwmReset = resetPeakRss(spec.pid);
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, readMemory(spec.pid)?.rssBytes ?? 0);
  }, RSS_SAMPLE_MS);
  const probe = startProbe(spec);

  const started = performance.now();
  const latencies = new SampleSet();
  const errorKinds: Record<string, number> = {};
  let completed = 0;
  let validated = !validateFirst || spec.validate === undefined;
  const fail = (kind: string) => {
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  };
  const openStream = async () => {
    const connection = new HttpConnection(spec.target.host, spec.target.port);
    try {
      await connection.connect(10_000);
      const exchange = await connection.exchange(spec.request, {
        timeoutMs: spec.streamMs + 30_000,
        capture: !validated,
      });
      const status = exchange.response?.status;
      if (exchange.error !== undefined || status !== 200) return fail(exchange.error ?? `HTTP ${status}`);
      if (!validated && exchange.response?.body !== undefined) {
        validated = true;
        const problem = spec.validate?.(exchange.response.body);
        if (problem) return fail(`wrong answer: ${problem.slice(0, 120)}`);
      }
      completed += 1;
      latencies.add(exchange.endedAt - exchange.sentAt);
    } catch (error) {
      fail(`connect: ${(error as Error).message}`);
    } finally {
      connection.close();
    }
  };
  const pending: Promise<void>[] = [];
  // Ramp in batches: a burst of 1,000 SYNs at once would overflow the listen backlog (511).
  for (let opened = 0; opened < spec.streams; opened += RAMP_BATCH) {
    for (let index = opened; index < Math.min(spec.streams, opened + RAMP_BATCH); index += 1) {
      pending.push(openStream());
    }
    await sleep(RAMP_INTERVAL_MS);
  }
  await Promise.all(pending);
  const durationMs = performance.now() - started;
  const probeResult = await probe.stop();
  clearInterval(sampler);
  const hwm = readMemory(spec.pid)?.peakRssBytes;
  const peakBytes = Math.max(sampledPeak, hwmReset && hwm !== undefined ? hwm : 0);
  await sleep(spec.settleMs);
  const errors = Object.values(errorKinds).reduce((sum, count) => sum + count, 0);
  return {
    completed,
    errors,
    errorKinds,
    durationMs,
    streamLatencyMs: latencies.summarise(),
    rssBeforeMb,
    rssPeakMb: peakBytes > 0 ? bytesToMb(peakBytes) : undefined,
    rssAfterMb: rssMb(spec.pid),
    probeMs: probeResult.samples.summarise(),
    probeFailures: probeResult.failures,
  };
}

interface ProbeResult {
  samples: SampleSet;
  failures: number;
}

/** Probes every 50 ms until stopped; one request at a time, so a stuck loop shows as one long sample. */
function startProbe(spec: SlowStreamsSpec): { stop(): Promise<ProbeResult> } {
  const result: ProbeResult = { samples: new SampleSet(), failures: 0 };
  let running = true;
  const loop = (async () => {
    let connection: HttpConnection | undefined;
    while (running) {
      const started = performance.now();
      try {
        if (!connection?.isAlive) {
          connection = new HttpConnection(spec.target.host, spec.target.port);
          await connection.connect(5_000);
        }
        const exchange = await connection.exchange(spec.probeRequest, { timeoutMs: 5_000 });
        // Any status: the figure is how fast the process answers, not what (the proxy has no /healthz).
        if (exchange.response) result.samples.add(exchange.endedAt - exchange.sentAt);
        else result.failures += 1;
      } catch {
        result.failures += 1;
      }
      await sleep(Math.max(0, PROBE_INTERVAL_MS - (performance.now() - started)));
    }
    connection?.close();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return result;
    },
  };
}

async function probeFor(spec: SlowStreamsSpec, durationMs: number): Promise<ProbeResult> {
  const probe = startProbe(spec);
  await sleep(durationMs);
  return probe.stop();
}

function rssMb(pid: number): number | undefined {
  const memory = readMemory(pid);
  return memory === undefined ? undefined : bytesToMb(memory.rssBytes);
}
