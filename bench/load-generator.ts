/**
 * Drives load at one target for a fixed time, in one of two modes:
 * - `concurrency`: N connections, each sending its next request when the last one is answered
 *   (closed loop: measures how many requests per second the target sustains);
 * - `rate`: requests start on a fixed schedule whatever the target does (open loop: measures
 *   latency at a given load). A request that finds no free connection waits in a queue, and its
 *   latency counts from the moment it was due, so a slow target cannot hide its queueing
 *   (no coordinated omission).
 * Every request has a timeout; the run drains in-flight requests before it returns (the rate mode
 * within a drain deadline), so CPU windows measured around it contain whole requests only.
 */
import { type ExchangeResult, HttpConnection } from "./http-connection.js";
import { SampleSet } from "./latency-stats.js";

export type LoadMode = { kind: "concurrency"; connections: number } | { kind: "rate"; perSecond: number };

export interface LoadSpec {
  host: string;
  port: number;
  request: Buffer;
  mode: LoadMode;
  durationMs: number;
  requestTimeoutMs: number;
  /** Connection cap of the rate mode (queueing starts beyond it). */
  maxConnections?: number;
  /**
   * Rate mode: how long to wait for the backlog after the last request is due (default: the
   * duration, at least 2 s). A target slower than the rate builds a backlog that could take minutes
   * to drain; what is still unanswered then counts as errors, so the run stays bounded.
   */
  drainTimeoutMs?: number;
  /** Checks the first response body; a message means the target answered wrongly. */
  validate?: (body: string) => string | undefined;
}

export interface LoadResult {
  completed: number;
  errors: number;
  /** Distinct error descriptions with counts (non-200 statuses, resets, timeouts, bad bodies). */
  errorKinds: Record<string, number>;
  /** Rate mode: requests never sent (queue full, or still queued at the drain deadline). */
  dropped: number;
  elapsedMs: number;
  latencyMs: SampleSet;
  /** Time to the first body byte (what a streaming client sees as the first token). */
  ttfbMs: SampleSet;
}

const MAX_QUEUE = 10_000;
const DEFAULT_RATE_CONNECTIONS = 256;

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const result: LoadResult = {
    completed: 0,
    errors: 0,
    errorKinds: {},
    dropped: 0,
    elapsedMs: 0,
    latencyMs: new SampleSet(),
    ttfbMs: new SampleSet(),
  };
  let validated = spec.validate === undefined;
  // The first fatal problem (wrong answer, target unreachable); every loop stops on it.
  const stop: StopFlag = { reason: undefined, drainExpired: false };
  const record = (exchange: ExchangeResult, startedAt: number) => {
    const described = describeFailure(exchange);
    const failure =
      described !== undefined && stop.drainExpired ? "unanswered at the drain deadline" : described;
    if (failure === undefined && !validated && exchange.response?.body !== undefined) {
      validated = true;
      const problem = spec.validate?.(exchange.response.body);
      if (problem) stop.reason ??= new Error(`target answered wrongly: ${problem}`);
    }
    if (failure !== undefined) {
      result.errors += 1;
      result.errorKinds[failure] = (result.errorKinds[failure] ?? 0) + 1;
      return;
    }
    result.completed += 1;
    result.latencyMs.add(exchange.endedAt - startedAt);
    const firstBodyAt = exchange.response?.firstBodyAt;
    if (firstBodyAt !== undefined) result.ttfbMs.add(firstBodyAt - startedAt);
  };
  const send = (connection: HttpConnection) =>
    connection.exchange(spec.request, { timeoutMs: spec.requestTimeoutMs, capture: !validated });

  const started = performance.now();
  if (spec.mode.kind === "concurrency") await runClosedLoop(spec, spec.mode.connections, send, record, stop);
  else await runOpenLoop(spec, spec.mode.perSecond, send, record, result, stop);
  result.elapsedMs = performance.now() - started;
  if (stop.reason !== undefined) throw stop.reason;
  return result;
}

type Send = (connection: HttpConnection) => Promise<ExchangeResult>;
type Record_ = (exchange: ExchangeResult, startedAt: number) => void;
interface StopFlag {
  reason: unknown;
  /** Rate mode: the backlog outlived the drain deadline; what is still in flight is abandoned. */
  drainExpired: boolean;
}

async function openConnection(spec: LoadSpec): Promise<HttpConnection> {
  const connection = new HttpConnection(spec.host, spec.port);
  await connection.connect();
  return connection;
}

async function runClosedLoop(
  spec: LoadSpec,
  connections: number,
  send: Send,
  record: Record_,
  stop: StopFlag,
): Promise<void> {
  const opened = await Promise.all(Array.from({ length: connections }, () => openConnection(spec)));
  const deadline = performance.now() + spec.durationMs;
  await Promise.all(
    opened.map(async (initial) => {
      let connection = initial;
      try {
        while (stop.reason === undefined && performance.now() < deadline) {
          if (!connection.isAlive) connection = await openConnection(spec);
          const exchange = await send(connection);
          record(exchange, exchange.sentAt);
        }
      } catch (error) {
        stop.reason ??= error;
      } finally {
        connection.close();
      }
    }),
  );
}

async function runOpenLoop(
  spec: LoadSpec,
  perSecond: number,
  send: Send,
  record: Record_,
  result: LoadResult,
  stop: StopFlag,
): Promise<void> {
  const maxConnections = spec.maxConnections ?? DEFAULT_RATE_CONNECTIONS;
  const intervalMs = 1000 / perSecond;
  const total = Math.max(1, Math.round((perSecond * spec.durationMs) / 1000));
  // Enough warm connections for ~10 ms of requests in flight; more open on demand.
  const idle: HttpConnection[] = await Promise.all(
    Array.from({ length: Math.min(maxConnections, Math.max(4, Math.ceil(perSecond / 100))) }, () =>
      openConnection(spec),
    ),
  );
  const all = new Set<HttpConnection>(idle);
  const queue: number[] = [];
  let opening = 0;
  let inFlight = 0;
  let issued = 0;
  let wakeDrained: (() => void) | undefined;

  const run = (connection: HttpConnection, dueAt: number) => {
    inFlight += 1;
    void (async () => {
      let current = connection;
      let due: number | undefined = dueAt;
      try {
        while (due !== undefined) {
          const exchange = await send(current);
          record(exchange, due);
          due = stop.reason === undefined && !stop.drainExpired ? queue.shift() : undefined;
          if (due !== undefined && !current.isAlive) current = await replace(current);
        }
      } catch (error) {
        stop.reason ??= error;
      }
      if (current.isAlive) idle.push(current);
      else all.delete(current);
      inFlight -= 1;
      if (inFlight === 0) wakeDrained?.();
    })();
  };
  const replace = async (dead: HttpConnection): Promise<HttpConnection> => {
    all.delete(dead);
    const fresh = await openConnection(spec);
    all.add(fresh);
    return fresh;
  };
  /** The most recently used idle connection the target has not closed (it closes idle ones after a while). */
  const takeIdle = (): HttpConnection | undefined => {
    for (let connection = idle.pop(); connection !== undefined; connection = idle.pop()) {
      if (connection.isAlive) return connection;
      all.delete(connection);
    }
    return undefined;
  };
  const dispatch = (dueAt: number) => {
    const connection = takeIdle();
    if (connection) return run(connection, dueAt);
    if (all.size + opening < maxConnections) {
      opening += 1;
      inFlight += 1; // Held while connecting so the drain does not finish early.
      void openConnection(spec).then(
        (fresh) => {
          opening -= 1;
          inFlight -= 1;
          all.add(fresh);
          if (!stop.drainExpired) return run(fresh, dueAt);
          result.dropped += 1;
          fresh.close();
          if (inFlight === 0) wakeDrained?.();
        },
        (error: Error) => {
          opening -= 1;
          inFlight -= 1;
          const kind = `connect: ${error.message}`;
          result.errors += 1;
          result.errorKinds[kind] = (result.errorKinds[kind] ?? 0) + 1;
          if (inFlight === 0) wakeDrained?.();
        },
      );
      return;
    }
    if (queue.length < MAX_QUEUE) queue.push(dueAt);
    else result.dropped += 1;
  };

  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      // Everything due by now goes out in this turn; latency counts from when it went out.
      while (issued < total && start + issued * intervalMs <= now) {
        issued += 1;
        dispatch(now);
      }
      if (stop.reason !== undefined) {
        queue.length = 0;
        resolve();
      } else if (issued < total)
        setTimeout(tick, Math.max(0, start + issued * intervalMs - performance.now()));
      else resolve();
    };
    tick();
  });
  const drained = new Promise<void>((resolve) => {
    wakeDrained = resolve;
    if (inFlight === 0) resolve();
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), spec.drainTimeoutMs ?? Math.max(2_000, spec.durationMs));
  });
  if ((await Promise.race([drained, deadline])) === "expired") {
    stop.drainExpired = true;
    result.dropped += queue.length;
    queue.length = 0;
    // Closing fails the exchanges in flight; each is recorded as unanswered and the drain completes.
    for (const connection of all) connection.close();
    await drained;
  }
  clearTimeout(timer);
  for (const connection of all) connection.close();
  for (const connection of idle) connection.close();
}

function describeFailure(exchange: ExchangeResult): string | undefined {
  if (exchange.error !== undefined) return exchange.error;
  const status = exchange.response?.status ?? 0;
  return status === 200 ? undefined : `HTTP ${status}`;
}
