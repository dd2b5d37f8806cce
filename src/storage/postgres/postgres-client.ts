/**
 * The PostgreSQL side of the SQL seam (../sql/sql-client.ts), on node-pg. A module of its own so an
 * embedded gateway never loads pg (~3 MB of heap it would not use): open-store.ts imports it only
 * when a database URL is configured.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import type { SqlClient, SqlParameter } from "../sql/sql-client.js";

export interface PostgresClientOptions {
  /** Server-side deadline of every statement; the client gives up shortly after as well. */
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
  maxConnections?: number;
  /** Errors of idle pooled connections (e.g. the server restarted); without a listener they crash. */
  onError?: (error: Error) => void;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
/** Slack between the server's statement_timeout and the client's own deadline (network stalls). */
const CLIENT_DEADLINE_SLACK_MS = 2_000;

/**
 * `run` statements are named, so each pooled connection parses and plans them once (pg prepares a
 * named statement on a connection's first use): the usage-record writes skip PostgreSQL's parse
 * and function lookup on every batch. The name is derived from the text, so two texts never share
 * one, and every instance agrees.
 */
const statementNames = new Map<string, string>();
function prepared(text: string, params: readonly SqlParameter[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `gateway_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values: params as unknown[] };
}

export function createPostgresClient(url: string, options: PostgresClientOptions = {}): SqlClient {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + CLIENT_DEADLINE_SLACK_MS,
    // A crashed caller must not hold row locks forever.
    idle_in_transaction_session_timeout: statementTimeoutMs * 3,
    keepAlive: true,
    application_name: "hi-gateway",
  });
  pool.on("error", options.onError ?? (() => {}));

  const wrapConnection = (connection: pg.PoolClient): SqlClient => {
    const client: SqlClient = {
      async query<T>(text: string, params: readonly SqlParameter[] = []) {
        const result = await connection.query(text, params as unknown[]);
        return result.rows as T[];
      },
      async run(text, params) {
        await connection.query(prepared(text, params));
      },
      async executeScript(text) {
        // Without parameters pg uses the simple protocol, which accepts several statements.
        await connection.query(text);
      },
      transaction: (fn) => fn(client),
      close: async () => {},
    };
    return client;
  };

  return {
    async query<T>(text: string, params: readonly SqlParameter[] = []) {
      const result = await pool.query(text, params as unknown[]);
      return result.rows as T[];
    },
    async run(text, params) {
      await pool.query(prepared(text, params));
    },
    async executeScript(text) {
      await pool.query(text);
    },
    async transaction(fn) {
      const connection = await pool.connect();
      let broken = false;
      // A checked-out client has no pool listener: without one, the server dropping the connection
      // mid-transaction (an outage) emits an unhandled 'error' that kills the process. The pending
      // query rejects on its own; here we only mark the connection as not reusable.
      const onConnectionError = () => {
        broken = true;
      };
      connection.on("error", onConnectionError);
      try {
        await connection.query("BEGIN");
        const result = await fn(wrapConnection(connection));
        await connection.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await connection.query("ROLLBACK");
        } catch {
          broken = true; // Do not hand a connection in an unknown state back to the pool.
        }
        throw error;
      } finally {
        connection.off("error", onConnectionError);
        connection.release(broken);
      }
    },
    async close() {
      await pool.end();
    },
  };
}
