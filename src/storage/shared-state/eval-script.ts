/**
 * One Lua script call on a Redis connection: EVALSHA, and EVAL when Redis answers NOSCRIPT (it
 * restarted or flushed its script cache); EVAL runs the script and caches it under the same SHA
 * for the next EVALSHA. Either call has the deadline; on the same connection, so it stays after
 * the commands written before it.
 */
import type { Redis } from "ioredis";
import { withDeadline } from "../with-deadline.js";

export async function evalScript(
  client: Redis,
  script: { source: string; sha: string },
  keys: readonly string[],
  args: readonly (string | number)[],
  timeoutMs: number,
  what: string,
): Promise<unknown> {
  try {
    return await withDeadline(client.evalsha(script.sha, keys.length, ...keys, ...args), timeoutMs, what);
  } catch (error) {
    if (!isNoScriptError(error)) throw error;
    return await withDeadline(client.eval(script.source, keys.length, ...keys, ...args), timeoutMs, what);
  }
}

/** Redis no longer holds the script (it restarted or flushed its cache): send it whole, as EVAL. */
export function isNoScriptError(error: unknown): boolean {
  return String((error as Error | undefined)?.message).startsWith("NOSCRIPT");
}
