/**
 * CPU time and memory of a process we started, read from Linux `/proc` so the figures come from
 * outside the measured process (the gateway exposes no metrics endpoint, and measuring from
 * inside would perturb it). Every reader degrades to `undefined` off Linux.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

let clockTicksPerSecond: number | undefined;

/** `utime + stime` are counted in clock ticks (USER_HZ); ask the system once, default 100. */
function getClockTicksPerSecond(): number {
  if (clockTicksPerSecond === undefined) {
    const answer = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
    const parsed = Number.parseInt(answer.stdout ?? "", 10);
    clockTicksPerSecond = Number.isFinite(parsed) && parsed > 0 ? parsed : 100;
  }
  return clockTicksPerSecond;
}

/** User + system CPU time of every thread of the process, in microseconds. */
export function readCpuMicros(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces; fields are counted after its closing ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1_000_000) / getClockTicksPerSecond();
}

/**
 * Busy time of one CPU (all processes on it), µs, from /proc/stat: user + nice + system + irq +
 * softirq + steal. Minus the target's own CPU time it shows how much else ran on the target's core
 * — the noise a shared machine adds to a run.
 */
export function readCoreBusyMicros(cpu: number): number | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/stat", "utf8");
  } catch {
    return undefined;
  }
  const line = text.split("\n").find((row) => row.startsWith(`cpu${cpu} `));
  if (!line) return undefined;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const ticks = user + nice + system + irq + softirq + (steal || 0);
  return Number.isFinite(ticks) ? (ticks * 1_000_000) / getClockTicksPerSecond() : undefined;
}

export interface MemoryReading {
  /** Resident set size now, bytes. */
  rssBytes: number;
  /** Peak resident set size since start or the last {@link resetPeakRss}, bytes. */
  peakRssBytes: number;
}

export function readMemory(pid: number): MemoryReading | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const readKb = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  const rssBytes = readKb("VmRSS");
  const peakRssBytes = readKb("VmHWM");
  if (rssBytes === undefined || peakRssBytes === undefined) return undefined;
  return { rssBytes, peakRssBytes };
}

/**
 * Resets VmHWM to the current RSS (`5` → /proc/<pid>/clear_refs, Linux ≥ 4.0), so each measurement
 * reports its own peak instead of the process's lifetime peak. false when the kernel refuses.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** The 1-, 5- and 15-minute load averages: recorded so a reader can judge how quiet the machine was. */
export function readLoadAverage(): [number, number, number] | undefined {
  try {
    const [one, five, fifteen] = readFileSync("/proc/loadavg", "utf8").split(" ").map(Number);
    return [one, five, fifteen];
  } catch {
    return undefined;
  }
}

export function bytesToMb(bytes: number): number {
  return bytes / (1024 * 1024);
}
