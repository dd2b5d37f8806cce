/**
 * Request ids: every response carries one in `X-Request-Id` (create-app.ts), errors and 404s
 * included. The id is ours, never the caller's: generation ids are derived from it.
 */
import { randomFillSync } from "node:crypto";

const ID_BYTES = 16;
/** A request id: 16 bytes as base64url, 22 characters. */
export const REQUEST_ID_PATTERN = /[A-Za-z0-9_-]{22}/;
// One call into the CSPRNG per 256 ids: a call per request (randomBytes(16)) costs more than the
// rest of making an id.
const pool = Buffer.allocUnsafeSlow(4096);
let poolOffset = pool.length;

export function createRequestId(): string {
  if (poolOffset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  // 16 random bytes as base64url: 22 URL-safe characters, collision-free in practice.
  const id = pool.toString("base64url", poolOffset, poolOffset + ID_BYTES);
  poolOffset += ID_BYTES;
  return id;
}
