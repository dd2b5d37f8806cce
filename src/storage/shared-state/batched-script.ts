/**
 * A Lua script's batch form: one call of it runs the script once per call it carries, in order,
 * and answers with one reply per call. Redis runs it as one script, so the calls are as atomic
 * with respect to other clients as each was alone, and they never interleave with one another.
 * A call that raises an error gets an error reply in its place; the others are unaffected, as
 * when each was its own command (what it wrote before the error stays, as in any script).
 *
 * KEYS: every call's keys, in order. ARGV, per call: its key count, its argument count, then its
 * arguments. The script's own `KEYS` and `ARGV` are that call's.
 */

/** At most this many calls in one call of a batch form: a script holds Redis while it runs. */
export const BATCH_CALLS_MAX = 64;

export function batchFormOf(source: string): string {
  return `local function one(KEYS, ARGV)
${source}
end
local replies, k, i, n = {}, 0, 1, 0
while i <= #ARGV do
  local key_count, arg_count = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local keys, args = {}, {}
  for j = 1, key_count do keys[j] = KEYS[k + j] end
  for j = 1, arg_count do args[j] = ARGV[i + 1 + j] end
  k, i, n = k + key_count, i + 2 + arg_count, n + 1
  local ok, reply = pcall(one, keys, args)
  if not ok then
    replies[n] = redis.error_reply(type(reply) == 'table' and reply.err or tostring(reply))
  elseif reply == nil then
    replies[n] = false
  else
    replies[n] = reply
  end
end
return replies
`;
}

/** The KEYS and ARGV of one call of a batch form that carries `calls`. */
export function encodeBatchCalls(
  calls: ReadonlyArray<{ readonly keys: readonly string[]; readonly args: readonly (string | number)[] }>,
): { keys: string[]; args: Array<string | number> } {
  const keys: string[] = [];
  const args: Array<string | number> = [];
  for (const call of calls) {
    for (const key of call.keys) keys.push(key);
    args.push(call.keys.length, call.args.length);
    for (const arg of call.args) args.push(arg);
  }
  return { keys, args };
}
