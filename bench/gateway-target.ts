/**
 * Runs the gateway as shipped (`npm start`: compiled to dist/, then `dist/main.js`) as a child
 * process: embedded mode by default (a temporary GATEWAY_DATA_DIR for PGlite), or distributed when
 * given database and Redis URLs; a temporary config whose models route to the bench upstream; a workspace + key made through the
 * admin API. The temp folder is removed on stop. `--compare-dir` starts a second one (the
 * baseline) from another checkout the same way, with its own folder, key and database.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchChild, startChild } from "./child-process.js";
import type { CpuPlan } from "./cpu-pinning.js";
import { FAST_GATEWAY_MODEL, SLOW_GATEWAY_MODEL } from "./scenarios.js";
import { FAST_UPSTREAM_MODEL, SLOW_UPSTREAM_MODEL } from "./upstream-server.js";

export const REPO_ROOT = new URL("..", import.meta.url).pathname;
const UPSTREAM_KEY_ENV = "BENCH_UPSTREAM_KEY";

export interface GatewayTarget {
  child: BenchChild;
  host: string;
  port: number;
  apiKey: string;
  stop(): Promise<void>;
}

export interface GatewayTargetOptions {
  /** The child's name in logs and errors: "gateway" (default) or "baseline". */
  name?: string;
  upstreamOrigin: string;
  plan: CpuPlan;
  cpu: number;
  /** Folder for `--cpu-prof` output; no profiling when absent. */
  profileDir?: string;
  /** The checkout whose `src/main.ts` runs (default: this one); for A/B runs against another tree. */
  gatewayDir?: string;
  /** Distributed mode: PostgreSQL and Redis instead of embedded PGlite and in-process state. */
  databaseUrl?: string;
  redisUrl?: string;
}

/** The catalog: two models on one openai-compatible provider (the bench upstream). */
export function createBenchGatewayConfig(upstreamOrigin: string): object {
  const model = (slug: string, upstreamModel: string) => ({
    slug,
    name: slug,
    provider: { slug: "bench", name: "Bench" },
    description: "Served by the bench's loopback upstream",
    context_length: 128_000,
    max_output_tokens: 4096,
    pricing: { prompt: "2", completion: "8", cached_prompt: "0.5" },
    features: ["tools", "streaming"],
    datacenter_locations: ["local"],
    routes: [{ provider: "bench-upstream", model: upstreamModel }],
  });
  return {
    providers: [
      {
        id: "bench-upstream",
        kind: "openai-compatible",
        base_url: `${upstreamOrigin}/v1`,
        api_key_env: UPSTREAM_KEY_ENV,
        timeouts: { connect_ms: 2_000, first_byte_ms: 30_000, idle_ms: 30_000 },
      },
    ],
    models: [model(FAST_GATEWAY_MODEL, FAST_UPSTREAM_MODEL), model(SLOW_GATEWAY_MODEL, SLOW_UPSTREAM_MODEL)],
  };
}

/**
 * V8/Node flags for a gateway child. The baseline of --compare-dir takes
 * BENCH_BASELINE_NODE_OPTIONS when that is set (even empty), so the same code can be compared with
 * and without a flag in one run; otherwise both gateways take BENCH_GATEWAY_NODE_OPTIONS.
 */
export function nodeOptionsFor(name: string): { NODE_OPTIONS?: string } {
  const own = name === "baseline" ? process.env.BENCH_BASELINE_NODE_OPTIONS : undefined;
  const flags = own ?? process.env.BENCH_GATEWAY_NODE_OPTIONS;
  return flags ? { NODE_OPTIONS: flags } : {};
}

export async function startGatewayTarget(options: GatewayTargetOptions): Promise<GatewayTarget> {
  const dataDir = await mkdtemp(join(tmpdir(), "hi-gateway-bench-"));
  const configPath = join(dataDir, "bench-config.yaml");
  // JSON is valid YAML: no YAML writer needed.
  await writeFile(configPath, JSON.stringify(createBenchGatewayConfig(options.upstreamOrigin), null, 2));
  const internalSecret = randomBytes(24).toString("hex");
  const profileFlags = options.profileDir ? ["--cpu-prof", "--cpu-prof-dir", options.profileDir] : [];
  const gatewayDir = options.gatewayDir ?? REPO_ROOT;
  const name = options.name ?? "gateway";
  let child: BenchChild;
  let port: number;
  try {
    const { command, args } = options.plan.wrap(
      [...profileFlags, ...buildGatewayEntry(gatewayDir, name)],
      options.cpu,
    );
    const started = await startChild({
      name,
      command,
      args,
      cwd: gatewayDir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "production",
        ...nodeOptionsFor(name),
        // The request-window profiler's settings (bench/profile-request-window.mjs), when given.
        ...Object.fromEntries(
          Object.entries(process.env).filter(([key]) => key.startsWith("PROFILE_WINDOW_")),
        ),
        PORT: "0",
        HOST: "127.0.0.1",
        // Empty means unset: embedded PGlite and in-process state, whatever the caller's shell has.
        DATABASE_URL: options.databaseUrl ?? "",
        REDIS_URL: options.redisUrl ?? "",
        GATEWAY_DATA_DIR: dataDir,
        // auto unless the caller chose: the request thread when pinned to one core, else a worker.
        GATEWAY_PGLITE_THREAD: process.env.GATEWAY_PGLITE_THREAD || "auto",
        // The gateway's default unless the caller chose (a baseline from before the setting ignores it).
        GATEWAY_HEAP_GROWING_PERCENT: process.env.GATEWAY_HEAP_GROWING_PERCENT ?? "",
        GATEWAY_CONFIG: configPath,
        INTERNAL_SHARED_SECRET: internalSecret,
        LOG_LEVEL: "info",
        [UPSTREAM_KEY_ENV]: "sk-bench-upstream",
      },
      readyPattern: /Gateway listening on http:\/\/127\.0\.0\.1:(\d+)/,
      readyTimeoutMs: 90_000,
    });
    child = started.child;
    port = Number(started.ready[1]);
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    await child.stop(20_000);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const apiKey = await createWorkspaceKey(`http://127.0.0.1:${port}`, internalSecret);
    return { child, host: "127.0.0.1", port, apiKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * An invoicing workspace (so thousands of requests never run out of credit and every request
 * takes the same path) and a key for it, through the admin API.
 */
async function createWorkspaceKey(origin: string, internalSecret: string): Promise<string> {
  const call = async (path: string, body: object) => {
    const response = await fetch(`${origin}/internal/admin${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-token": internalSecret },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`admin ${path} → ${response.status}: ${text}`);
    return JSON.parse(text);
  };
  const { workspace } = await call("/workspaces", { name: "bench", credits_usd: "1000", invoicing: true });
  const { secret } = await call("/keys", { workspace_id: workspace.id, name: "bench" });
  return secret as string;
}

/**
 * What `npm start` runs: the compiled gateway (scripts/build.mjs, then dist/main.js). A checkout
 * from before the build step (A/B runs against old commits) runs its TypeScript under tsx.
 */
function buildGatewayEntry(gatewayDir: string, name: string): string[] {
  const buildScript = join(gatewayDir, "scripts", "build.mjs");
  if (!existsSync(buildScript)) return ["--import", "tsx", join(gatewayDir, "src/main.ts")];
  const built = spawnSync(process.execPath, [buildScript], { cwd: gatewayDir, encoding: "utf8" });
  if (built.status !== 0)
    throw new Error(`building the ${name} (${gatewayDir}) failed: ${built.stderr || built.stdout}`);
  return [join(gatewayDir, "dist", "main.js")];
}
