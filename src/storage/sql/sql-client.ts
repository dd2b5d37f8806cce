/**
 * The single SQL seam: repositories and the migrator talk to this interface only, so Postgres (pg,
 * ../postgres/postgres-client.ts) and embedded PGlite (../pglite/pglite-client.ts) run exactly the
 * same statements.
 */
export type SqlParameter =
  | string
  | number
  | bigint
  | boolean
  | Date
  | null
  | readonly string[]
  // Column arrays for multi-row statements (`unnest($1::text[], $2::integer[], …)`).
  | readonly (string | number | boolean | null)[];

export interface SqlClient {
  query<T = Record<string, unknown>>(text: string, params?: readonly SqlParameter[]): Promise<T[]>;
  /**
   * Runs a statement whose rows are not read. Same effect as `query`; a client may keep the
   * statement prepared between calls (PGlite does: ../pglite/pglite-prepared.ts), so use it for statements
   * with a fixed text that run often.
   */
  run(text: string, params: readonly SqlParameter[]): Promise<void>;
  /** Runs a script of `;`-separated statements without parameters (migrations). */
  executeScript(text: string): Promise<void>;
  /** Commits when `fn` resolves, rolls back when it throws. Nested calls join the outer transaction. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
