/**
 * Pins the measured target to one core and everything else (harness, load generator, upstream) to
 * another with `taskset`, so the target's figures are "on one core" and the load generator never
 * steals its CPU. Without taskset or a second core the bench still runs, unpinned, and says so.
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";

export const TARGET_CPU = 0;
export const HARNESS_CPU = 1;

export interface CpuPlan {
  pinned: boolean;
  /** One line for the report: what was pinned where, or why nothing was. */
  description: string;
  /** The command and arguments that start `nodeArgs` on `cpu` (through taskset when pinned). */
  wrap(nodeArgs: string[], cpu: number): { command: string; args: string[] };
}

function hasTaskset(): boolean {
  const probe = spawnSync("taskset", ["--version"], { encoding: "utf8" });
  return probe.status === 0;
}

/** Decides the plan and, when pinning, moves every thread of this process to {@link HARNESS_CPU}. */
export function planCpuPinning(options: { disable?: boolean } = {}): CpuPlan {
  const unpinned = (description: string): CpuPlan => ({
    pinned: false,
    description,
    wrap: (nodeArgs) => ({ command: process.execPath, args: nodeArgs }),
  });
  if (options.disable) return unpinned("not pinned (--no-pin)");
  if (process.platform !== "linux") return unpinned(`not pinned: taskset needs Linux (${process.platform})`);
  if (cpus().length < 2) return unpinned("not pinned: fewer than 2 CPUs");
  if (!hasTaskset()) return unpinned("not pinned: taskset not found (Debian: apt-get install util-linux)");
  // -a: every existing thread (libuv pool, V8 helpers); threads created later inherit the mask.
  const self = spawnSync("taskset", ["-a", "-cp", String(HARNESS_CPU), String(process.pid)], {
    encoding: "utf8",
  });
  if (self.status !== 0) return unpinned(`not pinned: taskset failed (${self.stderr.trim()})`);
  return {
    pinned: true,
    description: `taskset: target on CPU ${TARGET_CPU}; harness, load generator and upstream on CPU ${HARNESS_CPU}`,
    wrap: (nodeArgs, cpu) => ({
      command: "taskset",
      args: ["-c", String(cpu), process.execPath, ...nodeArgs],
    }),
  };
}
