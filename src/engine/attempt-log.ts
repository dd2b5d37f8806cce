/**
 * A run's attempts as the usage record lists them (`attempts`): every upstream call in order,
 * skipped routes included, and which one serves. The run (generation-run.ts) writes it; the
 * record and the response's drop report read it.
 */
import type { GatewayError } from "../errors/gateway-error.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";
import type { RouteCandidate } from "./route-candidates.js";

interface Serving {
  /** Its place in `attempts`. */
  index: number;
  startedAt: number;
  candidate: RouteCandidate;
  /** Aborts its upstream call (a stream that failed before its first part). */
  abandon: () => void;
}

export class AttemptLog {
  /** Every upstream call so far, in order. */
  readonly attempts: GenerationAttempt[] = [];
  private serving?: Serving;

  get count(): number {
    return this.attempts.length;
  }

  /** An attempt ended (or was skipped: `circuit_open`) with `outcome`. */
  record(
    candidate: RouteCandidate,
    outcome: string,
    startedAt: number,
    dropped: readonly string[] = [],
  ): void {
    const attempt: GenerationAttempt = {
      provider: candidate.route.provider.id,
      model: candidate.model.slug,
      upstreamModel: candidate.route.upstreamModel,
      outcome,
      latencyMs: Math.round(performance.now() - startedAt),
    };
    if (dropped.length > 0) attempt.dropped = [...dropped];
    this.attempts.push(attempt);
  }

  /** An attempt serves: recorded `ok` now, its end told at settlement (`close`). */
  serve(candidate: RouteCandidate, startedAt: number, dropped: readonly string[], abandon: () => void): void {
    this.serving = { index: this.attempts.length, startedAt, candidate, abandon };
    this.record(candidate, "ok", startedAt, dropped);
  }

  get isServing(): boolean {
    return this.serving !== undefined;
  }

  /** The candidate that serves. */
  get servedBy(): RouteCandidate | undefined {
    return this.serving?.candidate;
  }

  /** The serving attempt's entry. */
  get served(): GenerationAttempt | undefined {
    return this.serving === undefined ? undefined : this.attempts[this.serving.index];
  }

  /** What the serving route's upstream went without; empty before one served. */
  get dropped(): readonly string[] {
    return this.served?.dropped ?? [];
  }

  /**
   * The serving attempt failed before its first part (a stream that started without it): its
   * call is abandoned and it is an ordinary failed attempt. Returns its candidate.
   */
  abandonServing(error: GatewayError): RouteCandidate {
    const serving = this.serving!;
    serving.abandon();
    this.serving = undefined;
    const attempt = this.attempts[serving.index];
    attempt.outcome = error.code;
    attempt.latencyMs = Math.round(performance.now() - serving.startedAt);
    return serving.candidate;
  }

  /** At settlement: the serving attempt's entry tells how it ended and how long it ran in all. */
  close(status: GenerationOutcome["status"], error: GatewayError | undefined): void {
    if (this.serving === undefined) return;
    const attempt = this.attempts[this.serving.index];
    attempt.latencyMs = Math.round(performance.now() - this.serving.startedAt);
    if (status === "cancelled") attempt.outcome = "cancelled";
    else if (error) attempt.outcome = error.code;
  }
}
