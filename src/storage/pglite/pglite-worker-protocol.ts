import type { SqlParameter } from "../sql/sql-client.js";

/** Messages between the embedded database's worker thread and its client (pglite-worker-*.ts). */

export type WorkerRequest =
  | { id: number; op: "query"; text: string; params: SqlParameter[]; tx?: number }
  | { id: number; op: "run"; text: string; params: SqlParameter[]; tx?: number }
  | { id: number; op: "exec"; text: string; tx?: number }
  | { id: number; op: "begin"; tx: number }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "close" };

export type WorkerReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: SerializedError }
  | { ready: true }
  | { failed: SerializedError };

/** An error's message and own fields (SQLSTATE `code`, `detail`, …), which structured clone drops. */
export interface SerializedError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}

/** The error the worker sent, as an Error with the same fields (isPermanentDatabaseError reads `code`). */
export function deserializeError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  return Object.assign(error, serialized.fields);
}
