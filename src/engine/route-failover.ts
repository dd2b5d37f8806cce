/**
 * Failover across a generation's route candidates (route-candidates.ts): which route the run tries
 * next, whether a failed attempt ends the run, when another pass over the routes may follow and
 * after how long. Candidates are tried in order; a failure another route could fix moves on to
 * the next one; passes over the routes that may be asked again repeat with backoff while the
 * retry policy allows (retry-policy.ts); a route whose breaker is open is skipped
 * (circuit-breaker.ts); no new attempt starts past the failover deadline (the first one is always
 * made). The run (generation-run.ts) makes the attempts and waits; this file decides.
 */
import { GatewayError } from "../errors/gateway-error.js";
import type { CircuitBreakers } from "./circuit-breaker.js";
import { computeBackoffMs, isFixableElsewhere, mayRetrySameRoute, type RetryPolicy } from "./retry-policy.js";
import type { RouteCandidate } from "./route-candidates.js";

/** What the failover needs that lives longer than a request; one set for all runs. */
export interface FailoverServices {
  breakers: CircuitBreakers;
  policy: RetryPolicy;
  /** Jitter source for backoff (tests pass a fixed one). */
  random?: () => number;
}

/** What the run does next. */
export type FailoverStep =
  /** Call this route. `anotherRouteWaits`: a later route could still be tried should it stall. */
  | { kind: "attempt"; candidate: RouteCandidate; anotherRouteWaits: boolean }
  /** This route's breaker is open: it is recorded as skipped, not called. */
  | { kind: "skip"; candidate: RouteCandidate }
  /** Wait this long, then `startNextPass` (unless the run was interrupted meanwhile). */
  | { kind: "wait"; ms: number }
  /** No attempt may follow: the run ends with this error. */
  | { kind: "end"; error: GatewayError };

export class RouteFailover {
  private pass = 0;
  private queue: readonly RouteCandidate[];
  private index = 0;
  /** This pass's routes that failed in a way a later pass may ask again. */
  private retryable: RouteCandidate[] = [];
  /** The longest Retry-After a route of this pass asked for, seconds. */
  private asked: number | undefined;
  private lastError: GatewayError | undefined;
  /** No new attempt from then on (performance.now() time): the failover deadline or the run's. */
  private readonly endsAt: number;

  constructor(
    private readonly candidates: readonly RouteCandidate[],
    startedAt: number,
    deadline: number,
    private readonly services: FailoverServices,
  ) {
    this.queue = candidates;
    this.endsAt = Math.min(deadline, startedAt + services.policy.failoverDeadlineMs);
  }

  /** The next step, after `attemptsMade` attempts (skipped routes included). */
  next(attemptsMade: number): FailoverStep {
    const { policy, breakers } = this.services;
    if (this.index < this.queue.length) {
      // No new attempt past the failover deadline (the first one is always made).
      if (attemptsMade > 0 && performance.now() >= this.endsAt) return this.end();
      const candidate = this.queue[this.index++];
      if (!breakers.tryAcquire(candidate.key)) return { kind: "skip", candidate };
      return { kind: "attempt", candidate, anotherRouteWaits: this.anotherRouteWaits(candidate) };
    }
    if (this.pass >= policy.retries || this.retryable.length === 0) return this.end();
    const wait = computeBackoffMs(this.pass + 1, policy, this.asked, this.services.random);
    if (performance.now() + wait >= this.endsAt) return this.end();
    return { kind: "wait", ms: wait };
  }

  /** After a `wait`: the next pass asks again the routes that may be. */
  startNextPass(): void {
    this.pass++;
    this.queue = this.retryable;
    this.index = 0;
    this.retryable = [];
    this.asked = undefined;
  }

  /**
   * Counts a failed attempt on its route's breaker; returns the run's end when no other attempt
   * may follow (a failure no other route could fix), else undefined.
   */
  judge(candidate: RouteCandidate, error: GatewayError): { error: GatewayError } | undefined {
    const { policy, breakers } = this.services;
    this.lastError = error;
    if (!isFixableElsewhere(error)) {
      breakers.release(candidate.key);
      return { error };
    }
    breakers.recordFailure(candidate.key, error);
    if (mayRetrySameRoute(error, policy)) {
      this.retryable.push(candidate);
      const hint = error.retryAfterHintSeconds;
      if (hint !== undefined) this.asked = Math.max(this.asked ?? 0, hint);
    }
    return undefined;
  }

  /** An attempt that ended because the run was interrupted: it says nothing about its route. */
  release(candidate: RouteCandidate): void {
    this.services.breakers.release(candidate.key);
  }

  /** The route served: its breaker closes. */
  recordSuccess(candidate: RouteCandidate): void {
    this.services.breakers.recordSuccess(candidate.key);
  }

  private end(): FailoverStep {
    return { kind: "end", error: this.lastError ?? this.createAllOpenError() };
  }

  /**
   * Whether a route could still be tried should `candidate` stall until its first-byte deadline:
   * one later in this pass whose breaker lets it through, and time left before the failover
   * deadline. Retrying the same route is not counted: a route that stalled once is left its full
   * response deadline rather than being cut and asked again.
   */
  private anotherRouteWaits(candidate: RouteCandidate): boolean {
    if (performance.now() + candidate.route.provider.timeouts.firstByteMs >= this.endsAt) return false;
    for (let next = this.index; next < this.queue.length; next++) {
      if (this.services.breakers.state(this.queue[next].key) !== "open") return true;
    }
    return false;
  }

  /**
   * Every candidate was skipped by its breaker: the caller is told what the routes last failed
   * with (a refused credential stays `provider_auth`), else that they are down, with Retry-After
   * until the first one takes a probe.
   */
  private createAllOpenError(): GatewayError {
    const { candidates } = this;
    const { breakers } = this.services;
    for (let index = candidates.length - 1; index >= 0; index--) {
      const last = breakers.lastFailure(candidates[index].key);
      if (last) return last;
    }
    const now = performance.now();
    const reopens = candidates
      .map((candidate) => breakers.reopensAt(candidate.key))
      .filter((at): at is number => at !== undefined);
    const seconds =
      reopens.length === 0 ? undefined : Math.max(1, Math.ceil((Math.min(...reopens) - now) / 1000));
    return new GatewayError(
      "provider_unavailable",
      "Every route of this model is failing; the gateway is not calling them for now",
      { retryAfterSeconds: seconds },
    );
  }
}
