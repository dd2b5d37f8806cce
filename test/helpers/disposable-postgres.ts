/**
 * A PostgreSQL cluster a fault test owns: `initdb` into a temporary folder and `pg_ctl` on a spare
 * loopback port, so the test may freeze (SIGSTOP/SIGCONT), kill or restart it without touching the
 * machine's shared server on 5432. Only the processes of this cluster are ever signalled: the
 * postmaster's PID from its `postmaster.pid` and that PID's children.
 *
 * initdb refuses to run as root; as root the cluster runs as the `postgres` user the package
 * created (its folder is handed to that user).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import pg from "pg";
import { findFreePort, waitFor } from "./disposable-servers.js";

export interface DisposablePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** PIDs of the postmaster and its children right now. */
  pids(): number[];
  /** SIGSTOP to every process of the cluster: connections stay open and nothing answers. */
  freeze(): void;
  /** SIGCONT to every process of the cluster. */
  thaw(): void;
  /** `pg_ctl stop -m immediate`: every connection drops at once. */
  kill(): void;
  /** Starts the cluster again on the same port and folder (after `kill`). */
  start(): Promise<void>;
  /** Stops the cluster (thawing it first) and deletes its folder. */
  destroy(): Promise<void>;
}

/**
 * A throwaway cluster (the caller destroys it), or undefined (the test skipped) when PostgreSQL's
 * server binaries are not installed; under CI=true they are required.
 */
export async function startDisposablePostgresOrSkip(t: TestContext): Promise<DisposablePostgres | undefined> {
  if (!findPostgresBin()) {
    if (process.env.CI === "true") throw new Error("PostgreSQL server binaries are required when CI=true");
    t.skip("PostgreSQL server binaries (initdb, pg_ctl) not installed — skipping");
    return undefined;
  }
  return startDisposablePostgres();
}

/** The newest installed PostgreSQL's bin folder, or undefined when none is installed. */
export function findPostgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : undefined;
}

export async function startDisposablePostgres(): Promise<DisposablePostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error("no PostgreSQL installation under /usr/lib/postgresql");
  const asRoot = process.getuid?.() === 0;
  const folder = mkdtempSync(join(tmpdir(), "gw-pg-"));
  const dataDir = join(folder, "data");
  const port = await findFreePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  if (asRoot) {
    const { uid, gid } = readPostgresUser();
    chownSync(folder, uid, gid);
    chmodSync(folder, 0o700);
  }
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? "runuser" : join(bin, tool);
    const fullArgs = asRoot ? ["-u", "postgres", "--", join(bin, tool), ...args] : args;
    const result = spawnSync(command, fullArgs, { encoding: "utf8", timeout: 60_000 });
    if (result.status !== 0) {
      throw new Error(
        `${tool} ${args.join(" ")} failed (${result.status}): ${result.stderr}${result.stdout}`,
      );
    }
  };

  run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  const start = async () => {
    run("pg_ctl", [
      "-D",
      dataDir,
      "-l",
      join(folder, "server.log"),
      "-w",
      "-t",
      "30",
      "-o",
      `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
      "start",
    ]);
    await waitFor("throwaway PostgreSQL answering", async () => ((await canQuery(url)) ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 100,
    });
  };
  await start();

  const postmasterPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const pids = (): number[] => {
    const postmaster = postmasterPid();
    if (postmaster === undefined) return [];
    const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(postmaster)], { encoding: "utf8" })
      .split("\n")
      .map((line) => Number(line.trim()))
      .filter((pid) => Number.isInteger(pid) && pid > 0);
    return [postmaster, ...children];
  };
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of pids()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Exited meanwhile.
      }
    }
  };
  let stopped = false;
  return {
    url,
    port,
    pids,
    freeze: () => signalAll("SIGSTOP"),
    thaw: () => signalAll("SIGCONT"),
    kill() {
      signalAll("SIGCONT");
      run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
    },
    start,
    async destroy() {
      if (stopped) return;
      stopped = true;
      signalAll("SIGCONT");
      if (postmasterPid() !== undefined) {
        try {
          run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
        } catch {
          // Already stopped.
        }
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function readPostgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (!line) throw new Error("running as root, but there is no postgres user to run initdb as");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
