/**
 * `--distributed`: a fresh PostgreSQL database for the gateway under test (created through the
 * admin URL, dropped afterwards), so the bench can show the gateway without PGlite in the process.
 * Only loopback servers are accepted: the bench never talks to anything but this machine.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const DEFAULT_POSTGRES_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export function assertLoopbackUrl(url: string, what: string): void {
  const host = new URL(url).hostname;
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "[::1]") {
    throw new Error(`${what} must be on loopback (127.0.0.1), got ${host}`);
  }
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  assertLoopbackUrl(adminUrl, "the PostgreSQL admin URL");
  const name = `hi_gateway_bench_${randomBytes(6).toString("hex")}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // WITH (FORCE) ends sessions the stopped gateway may have left (PostgreSQL ≥ 13).
    drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
