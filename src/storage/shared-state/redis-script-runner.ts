/**
 * Runs Lua scripts on Redis for the spend and rate limits (src/limits): each script is one atomic
 * step shared by every gateway instance. Connections of its own, so a burst of limit checks never
 * queues behind pub/sub, and it is the only thing src/limits gets from Redis: no other command.
 *
 * Two lanes, one connection each. `request`: what a request waits for before its upstream call
 * (admission), the calls of one event-loop turn in one write that never waits for an earlier
 * write's answers, and a batchable script's calls of that turn in one call (turn-batched-scripts.ts).
 * `background` (the default): settlements, lease refreshes, epoch
 * checks, auto-pipelined so that those of one event-loop turn leave in one write. Apart because an
 * auto-pipelined connection holds new commands until the pipeline in flight has its answer: an
 * admission behind a settlement would wait for that round trip too.
 *
 * Every call has a deadline and nothing queues while Redis is down (callers fail fast and decide).
 * Unlike SharedState, an unreachable Redis does not stop the gateway from starting: the connection
 * keeps trying in the background, and calls fail until it is up.
 */
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { redactUrl } from "../redact-url.js";
import { withDeadline } from "../with-deadline.js";
import { batchFormOf } from "./batched-script.js";
import { evalScript } from "./eval-script.js";
import { batchScriptsPerTurn, type HashedScript, type TurnBatchedScripts } from "./turn-batched-scripts.js";

type RunArguments = Parameters<TurnBatchedScripts["run"]>;

/** A Lua script; `name` appears in errors. Keys and arguments are given per call. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  /**
   * On the request lane, its calls of one event-loop turn go as one call of its batch form
   * (batched-script.ts). Only for a script that returns a value on every path and reads nothing
   * but its own KEYS and ARGV.
   */
  readonly batchable?: boolean;
}

export type ScriptReply = string | number | null | ScriptReply[];

/** `request`: a request waits for it before its upstream call; `background`: nobody waits. */
export type ScriptLane = "request" | "background";

export interface ScriptRunner {
  /**
   * EVALSHA, loading the script on NOSCRIPT (Redis restarted or flushed its cache). `keys` get the
   * runner's prefix; arguments are passed as given.
   */
  run(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    lane?: ScriptLane,
  ): Promise<ScriptReply>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface RedisScriptRunnerOptions {
  redisUrl: string;
  /** Prepended to every key (the SharedState prefix, so tests and co-tenants stay apart). */
  prefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  onError?: (error: Error) => void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

export async function openRedisScriptRunner(options: RedisScriptRunnerOptions): Promise<ScriptRunner> {
  const prefix = options.prefix ?? "";
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});
  const connect = (enableAutoPipelining: boolean) => {
    const client = new Redis(options.redisUrl, {
      lazyConnect: true,
      connectTimeout: connectTimeoutMs,
      commandTimeout: commandTimeoutMs,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      enableAutoPipelining,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    client.on("error", onError);
    return client;
  };
  // Settlements and refreshes issued in the same event-loop turn leave in one write: fewer
  // syscalls per request under load, no delay when idle.
  const redis = connect(true);
  const urgent = connect(false);
  const urgentTurns = batchScriptsPerTurn(urgent);
  const backgroundScripts = {
    run: (...call: RunArguments) => evalScript(redis, ...call),
  };
  /** Each script with its SHA-1 (and its batch form's), computed once. */
  const hashed = new Map<string, HashedScript>();
  const sha1 = (source: string) => createHash("sha1").update(source).digest("hex");
  const withHash = (script: LuaScript) => {
    let entry = hashed.get(script.source);
    if (!entry) {
      const batch = script.batchable === true ? batchFormOf(script.source) : undefined;
      entry = {
        source: script.source,
        sha: sha1(script.source),
        ...(batch === undefined ? {} : { batch: { source: batch, sha: sha1(batch) } }),
      };
      hashed.set(script.source, entry);
    }
    return entry;
  };

  try {
    await withDeadline(Promise.all([redis.connect(), urgent.connect()]), connectTimeoutMs, "Redis connect");
  } catch (error) {
    // Not fatal: the retry strategy keeps reconnecting; limit checks fail (and say so) meanwhile.
    onError(new Error(`Redis not reachable at ${redactUrl(options.redisUrl)}: ${(error as Error).message}`));
  }

  return {
    async run(script, keys, args, lane = "background") {
      const prefixed = keys.map((key) => prefix + key);
      const what = `Redis script ${script.name}`;
      // Admission: gathered per turn, never behind background scripts.
      const send = lane === "request" ? urgentTurns.run : backgroundScripts.run;
      return (await send(withHash(script), prefixed, args, commandTimeoutMs, what)) as ScriptReply;
    },
    async ping() {
      await withDeadline(redis.ping(), commandTimeoutMs, "Redis PING");
    },
    async close() {
      await Promise.all(
        [redis, urgent].map(async (client) => {
          try {
            await withDeadline(client.quit(), commandTimeoutMs, "Redis QUIT");
          } catch {
            client.disconnect();
          }
        }),
      );
    },
  };
}
