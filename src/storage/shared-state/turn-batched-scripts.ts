/**
 * The request lane's script calls, gathered per event-loop turn: every call made before the turn's
 * check phase leaves in one write (an ioredis pipeline), the next turn's in the next, without
 * waiting for the answers to the write before (ioredis's own auto-pipelining holds new commands
 * until the pipeline in flight is answered, which would put one admission's round trip in front
 * of another's). Under load a socket write per admission was the largest single cost of the Redis
 * client on the request path; idle, a lone call still leaves at the end of its own turn.
 *
 * A script with a batch form (batched-script.ts) goes further: its calls of one turn are one call
 * of that form, so one command object, one reply and one promise in this process serve them all.
 *
 * Replies come in the order of the calls (one connection), each settling its own caller; a call
 * whose script Redis no longer holds (NOSCRIPT: Redis restarted or flushed its cache) goes again
 * alone, as EVAL, which also caches the script for the next EVALSHA. Each call keeps its deadline.
 */
import type { Redis } from "ioredis";
import { withDeadline } from "../with-deadline.js";
import { BATCH_CALLS_MAX, encodeBatchCalls } from "./batched-script.js";
import { isNoScriptError } from "./eval-script.js";

export interface HashedScript {
  readonly source: string;
  readonly sha: string;
  /** The script's batch form (batched-script.ts), when its calls of one turn may share one call. */
  readonly batch?: { readonly source: string; readonly sha: string };
}

interface PendingCall {
  readonly script: HashedScript;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One command of a turn's write: a call alone, or the calls of one script in its batch form. */
interface Unit {
  readonly script: { readonly source: string; readonly sha: string };
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly answer: (reply: unknown) => void;
  readonly fail: (error: unknown) => void;
}

export interface TurnBatchedScripts {
  run(
    script: HashedScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
    what: string,
  ): Promise<unknown>;
}

export function batchScriptsPerTurn(client: Redis): TurnBatchedScripts {
  let pending: PendingCall[] = [];
  let scheduled = false;

  /** Sends a unit's command again as EVAL when Redis lost the script; otherwise fails it. */
  const retryOrFail = (unit: Unit, error: unknown) => {
    if (!isNoScriptError(error)) {
      unit.fail(error);
      return;
    }
    client
      .eval(unit.script.source, unit.keys.length, ...unit.keys, ...unit.args)
      .then(unit.answer, unit.fail);
  };

  const flush = () => {
    scheduled = false;
    const units = unitsOf(pending);
    pending = [];
    if (units.length === 1) {
      const unit = units[0]!;
      client
        .evalsha(unit.script.sha, unit.keys.length, ...unit.keys, ...unit.args)
        .then(unit.answer, (error: unknown) => retryOrFail(unit, error));
      return;
    }
    const pipeline = client.pipeline();
    for (const unit of units) pipeline.evalsha(unit.script.sha, unit.keys.length, ...unit.keys, ...unit.args);
    pipeline.exec().then(
      (results) => {
        for (let i = 0; i < units.length; i++) {
          const [error, reply] = results?.[i] ?? [new Error("Redis pipeline answered no reply"), null];
          if (error) retryOrFail(units[i]!, error);
          else units[i]!.answer(reply);
        }
      },
      (error: unknown) => {
        for (const unit of units) unit.fail(error);
      },
    );
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

/** The turn's calls as commands, in the order of their first call; same-script calls of a batchable script share one. */
function unitsOf(calls: readonly PendingCall[]): Unit[] {
  const slots: Array<PendingCall | PendingCall[]> = [];
  const open = new Map<string, PendingCall[]>();
  for (const call of calls) {
    if (call.script.batch === undefined) {
      slots.push(call);
      continue;
    }
    let group = open.get(call.script.sha);
    if (group === undefined || group.length === BATCH_CALLS_MAX) {
      group = [];
      open.set(call.script.sha, group);
      slots.push(group);
    }
    group.push(call);
  }
  return slots.map((slot) =>
    !Array.isArray(slot) ? unitOf(slot) : slot.length === 1 ? unitOf(slot[0]!) : batchUnitOf(slot),
  );
}

function unitOf(call: PendingCall): Unit {
  return { script: call.script, keys: call.keys, args: call.args, answer: call.resolve, fail: call.reject };
}

/** Two or more calls of one batchable script as one call of its batch form. */
function batchUnitOf(group: PendingCall[]): Unit {
  const { keys, args } = encodeBatchCalls(group);
  return {
    script: group[0]!.script.batch!,
    keys,
    args,
    answer(reply) {
      if (!Array.isArray(reply) || reply.length !== group.length) {
        const error = new Error(`Unexpected batch reply from Redis: ${JSON.stringify(reply)}`);
        for (const call of group) call.reject(error);
        return;
      }
      for (let i = 0; i < group.length; i++) {
        const each: unknown = reply[i];
        // The batch form answers a failed call with an error reply, which ioredis gives as an Error.
        if (each instanceof Error) group[i]!.reject(each);
        else group[i]!.resolve(each);
      }
    },
    fail(error) {
      for (const call of group) call.reject(error);
    },
  };
}
