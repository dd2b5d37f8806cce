/**
 * The admin CLI as its tests run it: a child process with none of the developer's gateway
 * variables (so a test never reaches another gateway or database), and a port nothing listens on.
 */
import { execFile } from "node:child_process";
import { createServer } from "node:net";

const PROJECT_ROOT = new URL("../../", import.meta.url).pathname;

/** Variables that pick the CLI's target: removed unless a test gives them. */
const TARGET_VARIABLES = [
  "DATABASE_URL",
  "REDIS_URL",
  "INTERNAL_SHARED_SECRET",
  "PORT",
  "GATEWAY_URL",
  "ALERT_WEBHOOK_ALLOW_LOOPBACK",
];

/** Generous: a first call compiles dist/, and CI machines are sometimes heavily loaded. */
const CLI_TIMEOUT_MS = 120_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `gateway-admin args` with `env`; `entry` is the source CLI by default (run with tsx), or
 * the bin entry users run (`bin/gateway-admin.js`, which runs the compiled CLI from dist/).
 */
export function runAdminCli(
  args: string[],
  env: Record<string, string>,
  entry = "src/cli/admin.ts",
): Promise<CliResult> {
  const cleanEnv = { ...process.env };
  for (const name of TARGET_VARIABLES) delete cleanEnv[name];
  const nodeArgs = entry.endsWith(".ts") ? ["--import", "tsx", entry, ...args] : [entry, ...args];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      nodeArgs,
      { cwd: PROJECT_ROOT, env: { ...cleanEnv, ...env }, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        // A run killed at the deadline says so, rather than passing for the CLI's own exit 1.
        const killed = error?.killed === true ? `\n[killed after ${CLI_TIMEOUT_MS} ms]` : "";
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr: `${stderr}${killed}` });
      },
    );
  });
}

/** A loopback port that was free a moment ago: where no gateway answers. */
export async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
