/**
 * Distributed mode's SharedState over ioredis. Three connections: a subscribed Redis connection can
 * run nothing but (UN)SUBSCRIBE, so commands and pub/sub are separate; writes nobody waits for on
 * a request's path (`setValue`, `extendObjectValue`, `deleteIndexedValue`: a finished record's
 * outcome, its removal after the commit) go auto-pipelined on a third, so those of one event-loop
 * turn leave in one write instead of one each; the values written in one turn are one script call,
 * the removals another. Apart because an auto-pipelined connection holds new commands while its
 * pipeline is in flight, which a read must not wait behind; one connection for both keeps a
 * value's write before its removal. Every command has a deadline
 * and nothing queues while Redis is down, so callers fail fast instead of hanging.
 * Redis being unreachable at start is not fatal either: the connections keep trying, and
 * subscriptions made meanwhile take effect on the first connection.
 */
import { createHash } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { redactUrl } from "../redact-url.js";
import type { SharedState } from "../store.js";
import { withDeadline } from "../with-deadline.js";
import { evalScript } from "./eval-script.js";

export interface RedisSharedStateOptions {
  redisUrl: string;
  /** Prepended to keys and channel names; lets tests and co-tenants share one Redis. */
  prefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  onError?: (error: Error) => void;
}

/** KEYS: index. ARGV: member. Returns {now ms, 1 when the member is new}. */
const TOUCH_MEMBER_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {now, redis.call('ZADD', KEYS[1], now, ARGV[1])}
`;

/**
 * Removes indexed values in one step. KEYS: for each removal its value's key, then its indexes.
 * ARGV: for each removal the number of its indexes, then its member (the key as the indexes list
 * it, without the prefix the connection adds to KEYS).
 */
const REMOVE_INDEXED_SCRIPT = `
local k = 1
for i = 1, #ARGV, 2 do
  local n = tonumber(ARGV[i])
  redis.call('DEL', KEYS[k])
  for j = 1, n do redis.call('ZREM', KEYS[k + j], ARGV[i + 1]) end
  k = k + 1 + n
end
return 0
`;
const REMOVE_INDEXED = {
  source: REMOVE_INDEXED_SCRIPT,
  sha: createHash("sha1").update(REMOVE_INDEXED_SCRIPT).digest("hex"),
};
/** Removals in one script call at most: a script holds Redis while it runs. */
const MAX_REMOVALS_PER_CALL = 256;

/**
 * Writes values in one step, in order. KEYS: the values' keys. ARGV, per key: `s` (set), its value
 * and its ttl ms; or `x` (extend), the JSON object members to add and an unused slot. An extension
 * overwrites the object's closing brace in place (SETRANGE keeps the expiry, and the stored start
 * of the value is not sent again); a key that is absent or holds no object is left alone.
 */
const WRITE_VALUES_SCRIPT = `
for i = 1, #KEYS do
  local op, value = ARGV[3 * i - 2], ARGV[3 * i - 1]
  if op == 's' then
    redis.call('SET', KEYS[i], value, 'PX', ARGV[3 * i])
  elseif redis.call('GETRANGE', KEYS[i], -1, -1) == '}' then
    redis.call('SETRANGE', KEYS[i], redis.call('STRLEN', KEYS[i]) - 1, ',' .. value .. '}')
  end
end
return 0
`;
/** Value writes in one script call at most. */
const MAX_WRITES_PER_CALL = 256;

interface PendingWrite {
  /** `s`: set `value` for `ttlMs`; `x`: add the members `value` to the object stored. */
  op: "s" | "x";
  key: string;
  value: string;
  ttlMs: number;
  resolve(): void;
  reject(error: unknown): void;
}

interface Removal {
  indexes: string[];
  key: string;
  resolve(): void;
  reject(error: unknown): void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

export async function createRedisSharedState(options: RedisSharedStateOptions): Promise<SharedState> {
  const prefix = options.prefix ?? "";
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});
  const connectionOptions: RedisOptions = {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    // While disconnected, commands are rejected at once rather than queued until Redis returns.
    enableOfflineQueue: false,
    // Keep reconnecting in the background, backing off to one attempt every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Resubscription is ours (see "ready" below) so channels added during an outage are not lost.
    autoResubscribe: false,
  };
  // keyPrefix covers keys only; channel names are prefixed by hand below.
  const commands = new Redis(options.redisUrl, { keyPrefix: prefix || undefined, ...connectionOptions });
  const subscriber = new Redis(options.redisUrl, connectionOptions);
  const writes = new Redis(options.redisUrl, {
    keyPrefix: prefix || undefined,
    ...connectionOptions,
    enableAutoPipelining: true,
  });
  commands.on("error", onError);
  subscriber.on("error", onError);
  writes.on("error", onError);

  const handlers = new Map<string, Set<(message: string) => void>>();
  subscriber.on("message", (channel: string, message: string) => {
    for (const handler of handlers.get(channel) ?? []) {
      try {
        handler(message);
      } catch {
        // A failing subscriber must not stop delivery to the others.
      }
    }
  });

  // Every (re)connection subscribes to every channel with a handler: channels added while Redis
  // was unreachable, at start included, are not lost. SUBSCRIBE is idempotent.
  subscriber.on("ready", () => {
    if (handlers.size > 0) subscriber.subscribe(...handlers.keys()).catch(onError);
  });
  try {
    await withDeadline(
      Promise.all([commands.connect(), subscriber.connect(), writes.connect()]),
      connectTimeoutMs,
      "Redis connect",
    );
  } catch (error) {
    // Not fatal: the gateway starts unready (readiness says redis: down) and the connections keep
    // trying in the background; commands fail fast meanwhile (docs/operations.md).
    onError(
      new Error(`Redis not reachable at ${redactUrl(options.redisUrl)}: ${(error as Error).message}`, {
        cause: error,
      }),
    );
  }

  // The removals asked for in one event-loop turn (those of one group commit, typically) go in one
  // script call: one command instead of a DEL and a ZREM per index for each, each with its own
  // command object, reply and promise in this process.
  let removals: Removal[] = [];
  const flushRemovals = () => {
    // A value's write goes before any removal asked for after it (same connection, in order).
    flushWrites();
    if (removals.length === 0) return;
    const batch = removals;
    removals = [];
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const removal of batch) {
      keys.push(removal.key, ...removal.indexes);
      args.push(removal.indexes.length, removal.key);
    }
    runRemovals(keys, args).then(
      () => {
        for (const removal of batch) removal.resolve();
      },
      (error: unknown) => {
        for (const removal of batch) removal.reject(error);
      },
    );
  };
  // The values written in one event-loop turn (finished records' outcomes from every answer that
  // ended in it) likewise go in one script call; a lone value set as a plain SET.
  let writesPending: PendingWrite[] = [];
  const flushWrites = () => {
    if (writesPending.length === 0) return;
    const batch = writesPending;
    writesPending = [];
    const lone = batch.length === 1 && batch[0]!.op === "s" ? batch[0]! : undefined;
    const args: Array<string | number> = [];
    if (lone === undefined) for (const write of batch) args.push(write.op, write.value, write.ttlMs);
    const written =
      lone !== undefined
        ? withDeadline(writes.set(lone.key, lone.value, "PX", lone.ttlMs), commandTimeoutMs, "Redis SET")
        : // EVAL, not EVALSHA: a NOSCRIPT answer's retry would land after a removal sent meanwhile.
          withDeadline(
            writes.eval(WRITE_VALUES_SCRIPT, batch.length, ...batch.map((write) => write.key), ...args),
            commandTimeoutMs,
            "Redis value script",
          );
    written.then(
      () => {
        for (const write of batch) write.resolve();
      },
      (error: unknown) => {
        for (const write of batch) write.reject(error);
      },
    );
  };
  const queueWrite = (op: PendingWrite["op"], key: string, value: string, ttlMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (writesPending.length === 0) setImmediate(flushWrites);
      writesPending.push({ op, key, value, ttlMs, resolve, reject });
      if (writesPending.length >= MAX_WRITES_PER_CALL) flushWrites();
    });
  const runRemovals = (keys: string[], args: Array<string | number>) =>
    // Still after the values' writes: the same connection.
    evalScript(writes, REMOVE_INDEXED, keys, args, commandTimeoutMs, "Redis removal script");

  return {
    mode: "redis",
    async ping() {
      await withDeadline(commands.ping(), commandTimeoutMs, "Redis PING");
    },
    async publish(channel, message) {
      await withDeadline(commands.publish(prefix + channel, message), commandTimeoutMs, "Redis PUBLISH");
    },
    setValue: (key, value, ttlMs) => queueWrite("s", key, value, ttlMs),
    extendObjectValue: (key, members) => queueWrite("x", key, members, 0),
    async getValue(key) {
      return withDeadline(commands.get(key), commandTimeoutMs, "Redis GET");
    },
    async deleteValue(key) {
      await withDeadline(commands.del(key), commandTimeoutMs, "Redis DEL");
    },
    async setIndexedValue(indexes, key, value, score, ttlMs) {
      const pipeline = commands.pipeline().set(key, value, "PX", ttlMs);
      for (const index of indexes) pipeline.zadd(index, score, key);
      throwFirstError(await withDeadline(pipeline.exec(), commandTimeoutMs, "Redis SET+ZADD"));
    },
    async listIndexedValues(index, maxScore, limit) {
      const keys = await withDeadline(
        commands.zrangebyscore(index, "-inf", maxScore, "LIMIT", 0, limit),
        commandTimeoutMs,
        "Redis ZRANGEBYSCORE",
      );
      if (keys.length === 0) return [];
      const values = await withDeadline(commands.mget(...keys), commandTimeoutMs, "Redis MGET");
      return keys.map((key, position) => ({ key, value: values[position] ?? null }));
    },
    deleteIndexedValue(indexes, key) {
      return new Promise<void>((resolve, reject) => {
        if (removals.length === 0) process.nextTick(flushRemovals);
        removals.push({ indexes, key, resolve, reject });
        if (removals.length >= MAX_REMOVALS_PER_CALL) flushRemovals();
      });
    },
    async touchMember(index, member) {
      // One script: the score is the server's clock, which every instance shares.
      const [nowMs, added] = (await withDeadline(
        commands.eval(TOUCH_MEMBER_SCRIPT, 1, index, member),
        commandTimeoutMs,
        "Redis heartbeat",
      )) as [number, number];
      return { nowMs: Number(nowMs), wasListed: Number(added) === 0 };
    },
    async listMembers(index) {
      const flat = await withDeadline(
        commands.zrange(index, 0, -1, "WITHSCORES"),
        commandTimeoutMs,
        "Redis ZRANGE",
      );
      const members: Array<{ member: string; score: number }> = [];
      for (let at = 0; at < flat.length; at += 2)
        members.push({ member: flat[at], score: Number(flat[at + 1]) });
      return members;
    },
    async removeMember(index, member) {
      await withDeadline(commands.zrem(index, member), commandTimeoutMs, "Redis ZREM");
    },
    async subscribe(channel, onMessage) {
      const fullChannel = prefix + channel;
      let channelHandlers = handlers.get(fullChannel);
      if (!channelHandlers) {
        channelHandlers = new Set();
        handlers.set(fullChannel, channelHandlers);
      }
      channelHandlers.add(onMessage);
      // While Redis is unreachable the handler stays registered and the next connection subscribes
      // it ("ready" above); messages published meanwhile are lost, which the caches' TTLs bound.
      if (subscriber.status === "ready") {
        try {
          // SUBSCRIBE is idempotent, so re-sending it for a second handler is harmless.
          await withDeadline(subscriber.subscribe(fullChannel), commandTimeoutMs, "Redis SUBSCRIBE");
        } catch (error) {
          onError(error as Error);
        }
      }
      return async () => {
        if (!removeHandler(fullChannel, onMessage) || subscriber.status !== "ready") return;
        try {
          await withDeadline(subscriber.unsubscribe(fullChannel), commandTimeoutMs, "Redis UNSUBSCRIBE");
        } catch (error) {
          // The connection went away meanwhile: it carries no subscription any more either.
          onError(error as Error);
        }
      };
    },
    async close() {
      handlers.clear();
      await Promise.all([quit(commands), quit(subscriber), quit(writes)]);
    },
  };

  /** Returns true when the channel has no handler left. */
  function removeHandler(channel: string, onMessage: (message: string) => void): boolean {
    const channelHandlers = handlers.get(channel);
    channelHandlers?.delete(onMessage);
    if (channelHandlers && channelHandlers.size > 0) return false;
    handlers.delete(channel);
    return true;
  }

  function throwFirstError(replies: Array<[Error | null, unknown]> | null): void {
    for (const [error] of replies ?? []) if (error) throw error;
  }

  async function quit(connection: Redis): Promise<void> {
    try {
      await withDeadline(connection.quit(), commandTimeoutMs, "Redis QUIT");
    } catch {
      connection.disconnect();
    }
  }
}
