/**
 * The requests this instance is serving, for two jobs:
 *
 * - Overload: beyond `maxInFlight` requests a new one is refused at once with
 *   `rate_limit_exceeded` and `Retry-After` instead of queueing without bound (each request holds
 *   a body of up to the body cap, an upstream socket and its usage record's reservation).
 * - Draining (SIGTERM/SIGINT): from `startDraining()` on, every new request is refused the same
 *   way and its connection closed, so the caller retries on another instance; the shutdown waits
 *   for the requests in flight (`waitForIdle`) and past its deadline ends them (`abortAll`).
 *
 * A request counts from its arrival until its response closes (finished, or the connection gone);
 * a turn of a Responses WebSocket counts as a request from its `response.create` to its end.
 * Health probes are not counted and never refused (request-listener.ts): a saturated or draining
 * instance still says so.
 */
import type { ServerResponse } from "node:http";
import { GatewayError } from "../../errors/gateway-error.js";
import { abortExchange } from "./client-gone-signal.js";

/** What a refused caller is told to wait: another instance, or this one a moment later, will do. */
export const OVERLOAD_RETRY_AFTER_SECONDS = 1;

export interface InFlightRequests {
  /** Requests being served now. */
  readonly size: number;
  readonly draining: boolean;
  /**
   * Counts the request until its response closes, or returns the error that refuses it (the
   * instance is full or draining); a refused request is not counted.
   */
  enter(outgoing: ServerResponse): GatewayError | undefined;
  /**
   * The same for a request that has no HTTP response of its own (a turn of a Responses WebSocket):
   * counted until `leave()`, ended through `abort` by `abortAll`.
   */
  enterTurn(abort: (reason: GatewayError) => void): InFlightTurn | GatewayError;
  /** From now on every new request is refused. */
  startDraining(): void;
  /** Resolves true once no request is in flight, false when `timeoutMs` passed first. */
  waitForIdle(timeoutMs: number): Promise<boolean>;
  /**
   * Ends the requests still in flight: a generation request is told through its client-gone signal
   * (it stops its upstream, ends its answer with `reason` in its format and settles its record);
   * any other is left to the closing of the connections.
   */
  abortAll(reason: GatewayError): void;
}

/** A counted WebSocket turn; `leave()` once it has ended (more calls do nothing). */
export interface InFlightTurn {
  leave(): void;
}

export function createInFlightRequests(maxInFlight: number): InFlightRequests {
  const open = new Set<ServerResponse>();
  const turns = new Set<(reason: GatewayError) => void>();
  let draining = false;
  let idleWaiters: Array<() => void> = [];
  const wakeIfIdle = () => {
    if (open.size + turns.size === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  };
  // One function for every response (`this` is the response): no closure per request.
  function onClose(this: ServerResponse): void {
    open.delete(this);
    wakeIfIdle();
  }
  const overloaded = new GatewayError(
    "rate_limit_exceeded",
    `This gateway instance is serving its maximum of ${maxInFlight} requests at once; retry in a moment`,
    { retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS },
  );
  const shuttingDown = new GatewayError(
    "rate_limit_exceeded",
    "This gateway instance is shutting down and takes no new requests; retry (another instance will answer)",
    { retryAfterSeconds: OVERLOAD_RETRY_AFTER_SECONDS },
  );

  const refusal = (): GatewayError | undefined => {
    if (draining) return shuttingDown;
    if (open.size + turns.size >= maxInFlight) return overloaded;
    return undefined;
  };

  return {
    get size() {
      return open.size + turns.size;
    },
    get draining() {
      return draining;
    },
    enter(outgoing) {
      const refused = refusal();
      if (refused !== undefined) return refused;
      open.add(outgoing);
      outgoing.on("close", onClose);
      return undefined;
    },
    enterTurn(abort) {
      const refused = refusal();
      if (refused !== undefined) return refused;
      // Its own function per turn, so the same `abort` entered twice still counts twice.
      const entry = (reason: GatewayError) => abort(reason);
      turns.add(entry);
      return {
        leave() {
          if (turns.delete(entry)) wakeIfIdle();
        },
      };
    },
    startDraining() {
      draining = true;
    },
    waitForIdle(timeoutMs) {
      if (open.size + turns.size === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          idleWaiters = idleWaiters.filter((waiter) => waiter !== wake);
          resolve(false);
        }, timeoutMs);
        idleWaiters.push(wake);
      });
    },
    abortAll(reason) {
      for (const outgoing of open) abortExchange(outgoing, reason);
      for (const abort of [...turns]) abort(reason);
    },
  };
}
