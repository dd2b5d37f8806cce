/**
 * The request lane's script calls, gathered per event-loop turn: every call made before the turn's
 * check phase leaves in one write (an ioredis pipeline), the next turn's in the next, without
 * waiting for the answers to the write before (ioredis's own auto-pipelining holds new commands
 * until the pipeline in flight is answered, which would put one admission's round trip in front
 * of another's). Under load a socket write per admission was the largest single cost of the Redis
 * client on the request path; idle, a lone call still leaves at the end of its own turn.
 *
 * Replies come in the order of the calls (one connection), each settling its own caller; a call
 * whose script Redis no longer holds (NOSCRIPT: Redis restarted or flushed its cache) goes again
 * alone, as EVAL, which also caches the script for the next EVALSHA. Each call keeps its deadline.
 */
import type { Redis } from "ioredis";
import { withDeadline } from "../with-deadline.js";
import { isNoScriptError } from "./eval-script.js";

interface PendingCall {
  readonly script: { source: string; sha: string };
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export interface TurnBatchedScripts {
  run(
    script: { source: string; sha: string },
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
    what: string,
  ): Promise<unknown>;
}

export function batchScriptsPerTurn(client: Redis): TurnBatchedScripts {
  let pending: PendingCall[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const calls = pending;
    pending = [];
    if (calls.length === 1) {
      const call = calls[0]!;
      client
        .evalsha(call.script.sha, call.keys.length, ...call.keys, ...call.args)
        .then(call.resolve, (error: unknown) => settleFailed(call, error));
      return;
    }
    const pipeline = client.pipeline();
    for (const call of calls) pipeline.evalsha(call.script.sha, call.keys.length, ...call.keys, ...call.args);
    pipeline.exec().then(
      (results) => {
        for (let i = 0; i < calls.length; i++) {
          const [error, reply] = results?.[i] ?? [new Error("Redis pipeline answered no reply"), null];
          if (error) settleFailed(calls[i]!, error);
          else calls[i]!.resolve(reply);
        }
      },
      (error: unknown) => {
        for (const call of calls) call.reject(error);
      },
    );
  };

  const settleFailed = (call: PendingCall, error: unknown) => {
    if (!isNoScriptError(error)) {
      call.reject(error);
      return;
    }
    client
      .eval(call.script.source, call.keys.length, ...call.keys, ...call.args)
      .then(call.resolve, call.reject);
  };

  return {
    run(script, keys, args, timeoutMs, what) {
      const reply = new Promise<unknown>((resolve, reject) => {
        pending.push({ script, keys, args, resolve, reject });
      });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return withDeadline(reply, timeoutMs, what);
    },
  };
}
