/** Starts the upstream (load core) and the bare proxy (target core) as child processes. */
import { join } from "node:path";
import { READY_PATTERN } from "./child-entry.js";
import { type BenchChild, startChild } from "./child-process.js";
import type { CpuPlan } from "./cpu-pinning.js";
import { REPO_ROOT } from "./gateway-target.js";

export interface StartedServer {
  child: BenchChild;
  port: number;
}

async function startBenchChild(
  name: string,
  script: string,
  scriptArgs: string[],
  plan: CpuPlan,
  cpu: number,
): Promise<StartedServer> {
  const { command, args } = plan.wrap(
    ["--import", "tsx", join(REPO_ROOT, "bench", script), ...scriptArgs],
    cpu,
  );
  const { child, ready } = await startChild({
    name,
    command,
    args,
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: "production" },
    readyPattern: READY_PATTERN,
    readyTimeoutMs: 30_000,
  });
  return { child, port: Number(ready[1]) };
}

export function startUpstreamChild(
  plan: CpuPlan,
  cpu: number,
  options: { streamTokens: number; slowTokens: number; slowIntervalMs: number },
): Promise<StartedServer> {
  return startBenchChild(
    "upstream",
    "upstream-main.ts",
    [
      "--stream-tokens",
      String(options.streamTokens),
      "--slow-tokens",
      String(options.slowTokens),
      "--slow-interval-ms",
      String(options.slowIntervalMs),
    ],
    plan,
    cpu,
  );
}

export function startProxyChild(plan: CpuPlan, cpu: number, upstreamOrigin: string): Promise<StartedServer> {
  return startBenchChild("proxy", "bare-proxy-main.ts", ["--upstream", upstreamOrigin], plan, cpu);
}
