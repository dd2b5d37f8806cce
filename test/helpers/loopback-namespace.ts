/**
 * Runs an agent CLI so that it can reach the gateway and nothing else: in a new user and network
 * namespace (`unshare -rn`) whose only interface is loopback, where test/helpers/loopback-relay.mjs
 * listens on the gateway's port and forwards to the test's {@link WireBridge} over a Unix socket.
 * Where `unshare` or `ip` is missing or user namespaces are off, the CLI runs in the test's own
 * network and relies on its settings (telemetry, update checks and plugin sync off) to stay quiet.
 */
import { spawn, spawnSync } from "node:child_process";

const RELAY = new URL("./loopback-relay.mjs", import.meta.url).pathname;

let available: boolean | undefined;

/**
 * Whether a loopback-only network namespace can be made here (checked once).
 * `CLIENTS_WITHOUT_NAMESPACE=1` runs the CLIs in the test's own network instead (to watch one with
 * tools of the host, or to try the path taken where `unshare` is missing).
 */
export function loopbackNamespaceAvailable(): boolean {
  if (process.env.CLIENTS_WITHOUT_NAMESPACE === "1") return false;
  if (available === undefined) {
    const probe = spawnSync("unshare", ["-rn", "sh", "-c", "ip link set lo up"], { timeout: 10_000 });
    available = probe.status === 0;
  }
  return available;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether the run was cut off at its deadline. */
  timedOut: boolean;
}

export interface CliCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs: number;
  /** The namespace bridge: the relay listens on `port` and forwards to `socketPath`. */
  namespace?: { port: number; socketPath: string };
}

export function runCli(run: CliCommand): Promise<CliRun> {
  const [command, args] =
    run.namespace === undefined
      ? [run.command, run.args]
      : [
          "unshare",
          [
            "-rn",
            "sh",
            "-c",
            'ip link set lo up && exec "$@"',
            "sh",
            process.execPath,
            RELAY,
            run.namespace.socketPath,
            String(run.namespace.port),
            run.command,
            ...run.args,
          ],
        ];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: run.cwd, env: run.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    // The CLI is this test's own child: ended by its PID when it overstays.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, run.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
