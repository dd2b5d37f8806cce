/** SQLSTATE checks that work for both pg's and PGlite's error objects (both carry `code`). */

function readSqlState(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

export function isForeignKeyViolation(error: unknown): boolean {
  return readSqlState(error) === "23503";
}
