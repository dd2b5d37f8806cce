/**
 * One generation from its first upstream call to its settlement. The run tries the request's
 * route candidates in order (route-candidates.ts) until one answers: a failure another route could
 * fix moves on to the next one, passes over the list repeat with backoff while the retry policy
 * allows (retry-policy.ts), and routes whose breaker is open are skipped (circuit-breaker.ts).
 * Failover ends once an attempt has produced output: a streamed answer commits to its route when
 * its first part arrives. A response that started without it (keep-alives only) still fails over
 * when that route fails before any part, since no output has reached the client.
 *
 * The run settles itself, exactly once, on every way out: the upstream finished or failed, the
 * client left (at any stage: before the first call, between attempts, mid-stream), the deadline
 * stopped it, or whoever consumed the parts stopped early (a writer or encoder that threw).
 * A non-streamed answer is the same run with one step (the adapter's whole result) instead of
 * parts; both settle through `computeSettlement`, and both report failures as a GatewayError.
 *
 * Each attempt is one upstream round; a run that needs several rounds for one answer (server
 * tools, tool-loop.ts) adds them after the serving attempt, on the route that served, under the
 * same deadline and settlement: each round is metered when it ends, the tools' costs are added,
 * and a round that fails after the first one ends the answer with an error (streamed: in band).
 */
import type {
  CanonicalResult,
  CanonicalStreamPart,
  CanonicalUsage,
  FinishReason,
} from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import type { CanonicalRequest } from "../canonical/request.js";
import type { Settlement } from "../canonical/settlement.js";
import { createGatewayErrorFromInfo, GatewayError, toGatewayError } from "../errors/gateway-error.js";
import { estimateTextTokens } from "../metering/estimate-usage.js";
import { type ProviderAdapter, routeReadsPdf, type UpstreamCall } from "../providers/provider-adapter.js";
import { convertResultToParts } from "../providers/shared/convert-result-to-parts.js";
import { foldStreamParts } from "../providers/shared/fold-stream-parts.js";
import type { AdmittedGeneration, ExecutedToolCall } from "./admitted-generation.js";
import type { CircuitBreakers } from "./circuit-breaker.js";
import { createDeadlineError } from "./create-deadline-error.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";
import { listDroppedFor, refuseLoss } from "./judge-loss.js";
import { collectResultText, DeliveredOutput, type MeteredUsage, type MeterInput } from "./meter-usage.js";
import type { AdapterRegistry, DocumentSession, DocumentsForRoute } from "./ports.js";
import { computeBackoffMs, isFixableElsewhere, mayRetrySameRoute, type RetryPolicy } from "./retry-policy.js";
import type { RouteCandidate } from "./route-candidates.js";
import { createOutcome } from "./settle.js";
import { addUsage, type RoundDecision, ToolLoop } from "./tool-loop.js";

/** What the engine does for a run; one set for all runs, each call names the generation. */
export interface RunHooks {
  /**
   * Writes the outcome and settles the reservation; never rejects. `served`: the serving attempt;
   * `toolCalls`: the server-tool calls executed.
   */
  settle(
    admitted: AdmittedGeneration,
    outcome: GenerationOutcome,
    served: GenerationAttempt | undefined,
    toolCalls: ExecutedToolCall[],
  ): Promise<void>;
  /**
   * What the upstream calls (`rounds`: each call's usage, priced in its own tier) and `toolMicroUsd`
   * of server tools cost together, never above the reservation.
   */
  cost(admitted: AdmittedGeneration, rounds: readonly CanonicalUsage[], toolMicroUsd: number): number;
  /** Meters one round; `request`: the round's own request when it is not the first one's. */
  meter(
    admitted: AdmittedGeneration,
    input: Pick<MeterInput, "reported" | "finished" | "estimateOutputTokens">,
    request?: CanonicalRequest,
  ): MeteredUsage;
  /**
   * Extends the reservation, when needed, so that what was spent (`spent`: each metered round's
   * usage, `toolMicroUsd` so far), `toolsMicroUsd` more, and the next round's worst case all fit.
   */
  reserveRound(
    admitted: AdmittedGeneration,
    spent: readonly CanonicalUsage[],
    toolMicroUsd: number,
    toolsMicroUsd: number,
    next: { request: CanonicalRequest; resultTokens: number } | undefined,
  ): Promise<boolean>;
  /** A complete answer (finished, not cut, no error) of a cached request: stored; never rejects. */
  keepAnswer(admitted: AdmittedGeneration, result: CanonicalResult): Promise<void>;
}

export interface RunServices {
  adapters: AdapterRegistry;
  breakers: CircuitBreakers;
  policy: RetryPolicy;
  random?: () => number;
}

export interface RunTiming {
  /** Streamed: how long the response waits for the first part before it starts without it. */
  firstPartWaitMs: number;
}

type FirstStep =
  | { kind: "step"; step: IteratorResult<CanonicalStreamPart> }
  | { kind: "thrown"; error: unknown };

export class GenerationRun {
  /** Every upstream call so far, in order (the record's `attempts`). */
  readonly attempts: GenerationAttempt[] = [];
  /** Non-streamed: the serving attempt's whole answer. */
  result?: CanonicalResult;
  private usage?: CanonicalUsage;
  private finishReason?: FinishReason;
  private upstreamModel?: string;
  private error?: GatewayError;
  private output: DeliveredOutput;
  private estimateOutput: () => number;
  private cancelled = false;
  /** An upstream call was in flight when the client left: the prompt was likely processed. */
  private cancelledDuringCall = false;
  private callInFlight = false;
  /** Set by `stop`: the error the run ends with once the upstream call is aborted. */
  private stoppedWith?: GatewayError;
  /** Why the run was aborted (`cancel`, `stop`, a consumer that stopped early); undefined until then. */
  private abortReason?: unknown;
  /**
   * The upstream call in flight, or the serving stream's: `cancel` and `stop` abort it directly
   * (each attempt has its own signal, so abandoning a failed one cancels its I/O only).
   */
  private attemptController?: AbortController;
  /** The run's own signal, for the waits and later rounds that need one (made when first asked for). */
  private runController?: AbortController;
  private deadlineTimer?: NodeJS.Timeout;
  private settlement?: Promise<Settlement>;
  private iterator?: AsyncIterator<CanonicalStreamPart>;
  private pendingFirst?: Promise<IteratorResult<CanonicalStreamPart>>;
  /** The serving attempt (index in `attempts`), when it started, and how to abandon its call. */
  private serving?: { index: number; startedAt: number; candidate: RouteCandidate; abandon: () => void };
  /** Where the attempt loop stands, so a streamed run can resume it (see `parts`). */
  private readonly cursor: {
    pass: number;
    queue: readonly RouteCandidate[];
    index: number;
    retryable: RouteCandidate[];
    asked: number | undefined;
    lastError: GatewayError | undefined;
  };
  private timing: RunTiming = { firstPartWaitMs: 0 };
  /** The server-tool loop, when the request activated server tools. */
  private readonly loop?: ToolLoop;
  /** What reading the documents cost for the latest attempt's route (the serving one's, once one serves). */
  private documentMicroUsd = 0;
  /** Rounds already ended and metered (tool loop), summed; undefined before the first one ends. */
  private completedUsage?: CanonicalUsage;
  /** Each metered round's own usage: the provider prices each call in its own tier. */
  private readonly completedRounds: CanonicalUsage[] = [];
  private completedEstimated = false;
  /** A round's upstream call was made and the round is not metered yet. */
  private roundOpen = false;
  /** The response started before the upstream's first part arrived. */
  private slowStart = false;
  private readonly onClientGone = () => this.cancel();
  /** Streamed, a cached request's miss: the parts shown so far, to store once complete. */
  private kept?: { parts: CanonicalStreamPart[]; bytes: number };

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly signal: AbortSignal,
    private readonly hooks: RunHooks,
    private readonly services: RunServices,
  ) {
    this.output = new DeliveredOutput(admitted.call.maxOutputTokens);
    this.estimateOutput = () => this.output.estimateTokens();
    if (admitted.serverTools !== undefined) {
      this.loop = new ToolLoop(admitted.serverTools, admitted.call.request, {
        maxRounds: admitted.maxToolRounds,
        requestId: admitted.requestId,
        maxNativeCallsPerRound: admitted.maxNativeCallsPerRound,
      });
    }
    if (admitted.cache !== undefined && !admitted.cache.hit && admitted.request.stream) {
      this.kept = { parts: [], bytes: 0 };
    }
    this.cursor = {
      pass: 0,
      queue: admitted.candidates,
      index: 0,
      retryable: [],
      asked: undefined,
      lastError: undefined,
    };
  }

  /**
   * Runs the attempts until one serves. Resolves with the run once it has: non-streamed with
   * `result` set and the run settled; streamed once the first part arrived (or `firstPartWaitMs`
   * passed, then the response starts without it and a later failure is an in-band error).
   * When no candidate serves, the run is settled and the last classified error is thrown.
   */
  static async start(
    admitted: AdmittedGeneration,
    signal: AbortSignal,
    hooks: RunHooks,
    services: RunServices,
    timing: RunTiming,
  ): Promise<GenerationRun> {
    const run = new GenerationRun(admitted, signal, hooks, services);
    if (signal.aborted) {
      run.cancelled = true;
      await run.settle();
      throw toGatewayError(signal.reason);
    }
    signal.addEventListener("abort", run.onClientGone, { once: true });
    run.deadlineTimer = setTimeout(
      () => run.stop(createDeadlineError(admitted.deadlineMs)),
      Math.max(0, admitted.deadline - performance.now()),
    );
    run.deadlineTimer.unref();
    run.timing = timing;
    // Without a tool loop there is nothing to continue (and no await to pay for).
    const failure =
      (await run.runAttempts()) ?? (run.loop === undefined ? undefined : await run.continueNonStreamedLoop());
    if (failure === undefined) {
      if (!admitted.request.stream) await run.settle();
      return run;
    }
    if (run.cancelled) failure.error = toGatewayError(signal.reason);
    else run.error = failure.error;
    await run.settle();
    throw failure.error;
  }

  /**
   * The attempt loop, from where it stands; undefined once an attempt serves, else the error the
   * run ends with.
   */
  private async runAttempts(): Promise<{ error: GatewayError } | undefined> {
    const { policy, breakers } = this.services;
    const cursor = this.cursor;
    const failoverEnds = Math.min(
      this.admitted.deadline,
      this.admitted.startedAt + policy.failoverDeadlineMs,
    );
    for (;;) {
      while (cursor.index < cursor.queue.length) {
        // No new attempt past the failover deadline (the first one is always made).
        if (this.attempts.length > 0 && performance.now() >= failoverEnds) {
          return { error: cursor.lastError ?? this.createAllOpenError(this.admitted.candidates) };
        }
        const candidate = cursor.queue[cursor.index++];
        if (!breakers.tryAcquire(candidate.key)) {
          this.admitted.trace?.startAttempt(this.attempts.length);
          this.recordAttempt(candidate, "circuit_open", performance.now());
          continue;
        }
        const error = await this.attempt(candidate, this.anotherRouteWaits(candidate, failoverEnds));
        if (error === undefined) return undefined;
        const end = this.judgeFailure(candidate, error);
        if (end) return end;
      }
      if (cursor.pass >= policy.retries || cursor.retryable.length === 0) break;
      const wait = computeBackoffMs(cursor.pass + 1, policy, cursor.asked, this.services.random);
      if (performance.now() + wait >= failoverEnds) break;
      await this.sleep(wait);
      if (this.cancelled || this.stoppedWith) {
        return { error: this.stoppedWith ?? toGatewayError(this.signal.reason) };
      }
      cursor.pass++;
      cursor.queue = cursor.retryable;
      cursor.index = 0;
      cursor.retryable = [];
      cursor.asked = undefined;
    }
    return { error: cursor.lastError ?? this.createAllOpenError(this.admitted.candidates) };
  }

  /**
   * Whether a route could still be tried should `candidate` stall until its first-byte deadline:
   * one later in this pass whose breaker lets it through, and time left before the failover
   * deadline. Retrying the same route is not counted: a route that stalled once is left its full
   * response deadline rather than being cut and asked again.
   */
  private anotherRouteWaits(candidate: RouteCandidate, failoverEnds: number): boolean {
    const { queue, index } = this.cursor;
    if (performance.now() + candidate.route.provider.timeouts.firstByteMs >= failoverEnds) return false;
    for (let next = index; next < queue.length; next++) {
      if (this.services.breakers.state(queue[next].key) !== "open") return true;
    }
    return false;
  }

  /** Counts a failed attempt; returns the run's end when no other attempt may follow. */
  private judgeFailure(candidate: RouteCandidate, error: GatewayError): { error: GatewayError } | undefined {
    const { policy, breakers } = this.services;
    if (this.cancelled || this.stoppedWith) {
      breakers.release(candidate.key);
      return { error: this.stoppedWith ?? error };
    }
    this.cursor.lastError = error;
    if (!isFixableElsewhere(error)) {
      breakers.release(candidate.key);
      return { error };
    }
    breakers.recordFailure(candidate.key, error);
    if (mayRetrySameRoute(error, policy)) {
      this.cursor.retryable.push(candidate);
      const hint = error.retryAfterHintSeconds;
      if (hint !== undefined) this.cursor.asked = Math.max(this.cursor.asked ?? 0, hint);
    }
    return undefined;
  }

  /**
   * A streamed attempt that was committed without its first part (the response started) failed
   * before producing any: nothing reached the client but keep-alives, so it is an ordinary failed
   * attempt and the run goes on with the next candidate. Returns the run's end, or undefined when
   * another attempt now serves.
   */
  private async failOverBeforeFirstPart(error: GatewayError): Promise<{ error: GatewayError } | undefined> {
    const serving = this.serving!;
    serving.abandon();
    this.serving = undefined;
    this.iterator = undefined;
    this.pendingFirst = undefined;
    this.slowStart = false;
    const attempt = this.attempts[serving.index];
    attempt.outcome = error.code;
    attempt.latencyMs = Math.round(performance.now() - serving.startedAt);
    return this.judgeFailure(serving.candidate, error) ?? (await this.runAttempts());
  }

  /** One upstream call; undefined when it serves (and the run is committed to it). */
  private async attempt(
    candidate: RouteCandidate,
    anotherRouteWaits: boolean,
  ): Promise<GatewayError | undefined> {
    // Stopped or left since the last attempt: no call is made.
    if (this.abortReason !== undefined) return this.stoppedWith ?? toGatewayError(this.signal.reason);
    const adapter = this.services.adapters.get(candidate.route.provider.kind);
    const startedAt = performance.now();
    const traceHeaders = this.admitted.trace?.startAttempt(this.attempts.length);
    if (!adapter) {
      const error = new GatewayError(
        "internal_error",
        `No adapter for provider kind "${candidate.route.provider.kind}"`,
      );
      this.recordAttempt(candidate, error.code, startedAt);
      return error;
    }
    const admitted = this.admitted;
    admitted.adapter = adapter;
    // Admission built the call for the first candidate; any other attempt (a retry too: its
    // documents are read afresh) starts from the route's own call.
    if (this.attempts.length > 0 || candidate !== admitted.candidates[0]) {
      admitted.call = admitted.callFor(candidate);
    }
    // Later rounds of the serving attempt (server tools) keep its trace headers with the call.
    admitted.call.traceHeaders = traceHeaders;
    if (admitted.documents !== undefined) {
      const unreadable = await this.readDocuments(admitted.documents, adapter, candidate);
      if (unreadable !== undefined) return unreadable;
    }
    // Failover may change the provider: the first round is this route's (its documents, the tools
    // its provider runs itself) and so are the prices of those tools.
    this.loop?.useRoute(admitted.call.request, candidate.model.nativeServerTools ?? {});
    // Each attempt has its own signal: abandoning a failed one cancels its upstream I/O only.
    const attemptController = new AbortController();
    this.attemptController = attemptController;
    // Stopped or left while the documents were read: the call starts aborted.
    if (this.abortReason !== undefined) attemptController.abort(this.abortReason);
    const call = toUpstreamCall(admitted.call, admitted.call.request, attemptController.signal);
    call.anotherRouteWaits = anotherRouteWaits;
    const dropped = listDroppedFor(adapter, call);
    const refusal = refuseLoss(call.request, dropped, candidate.model.slug);
    if (refusal !== undefined) {
      this.attemptController = undefined;
      this.recordAttempt(candidate, refusal.code, startedAt, dropped);
      return refusal;
    }
    let error: GatewayError | undefined;
    this.callInFlight = true;
    try {
      if (!admitted.request.stream) {
        const result = await adapter.generate(call);
        this.observeResult(result);
      } else {
        error = await this.openStream(adapter.stream(call)[Symbol.asyncIterator](), this.timing);
      }
    } catch (thrown) {
      error = toGatewayError(thrown);
    }
    this.callInFlight = false;
    if (error !== undefined) {
      this.attemptController = undefined;
      attemptController.abort(error);
      this.recordAttempt(candidate, this.cancelled ? "cancelled" : error.code, startedAt, dropped);
      return error;
    }
    // A streamed attempt that serves stays the one a stop or a cancel aborts; a non-streamed one is over.
    if (!admitted.request.stream) this.attemptController = undefined;
    this.services.breakers.recordSuccess(candidate.key);
    this.roundOpen = true;
    this.serving = {
      index: this.attempts.length,
      startedAt,
      candidate,
      abandon: () => {
        if (this.attemptController === attemptController) this.attemptController = undefined;
        attemptController.abort(new GatewayError("provider_timeout", "Attempt abandoned"));
      },
    };
    this.recordAttempt(candidate, "ok", startedAt, dropped);
    return undefined;
  }

  /**
   * Sets the call's request (the route's first request, from `callFor`) to what this route reads of
   * the request's documents: the files, or their text. A document that cannot be read ends the run with its error (`invalid_request`
   * naming the part); that is no upstream attempt, so none is recorded.
   */
  private async readDocuments(
    documents: DocumentSession,
    adapter: ProviderAdapter,
    candidate: RouteCandidate,
  ): Promise<GatewayError | undefined> {
    let read: DocumentsForRoute;
    try {
      read = await documents.requestFor(
        this.admitted.call.request,
        routeReadsPdf(adapter, candidate.model),
        this.runSignal,
      );
    } catch (thrown) {
      return this.stoppedWith ?? toGatewayError(thrown);
    }
    this.admitted.call.request = read.request;
    this.documentMicroUsd = read.costMicroUsd;
    return undefined;
  }

  /**
   * Starts a streamed attempt and waits up to `firstPartWaitMs` for its first part. A failure in
   * that window is returned (the run may fail over). A slow first part (a reasoning model
   * thinking quietly) does not hold the response back longer: the stream starts, keep-alives
   * flow, and a later failure becomes an in-band error frame.
   */
  private async openStream(
    iterator: AsyncIterator<CanonicalStreamPart>,
    timing: RunTiming,
  ): Promise<GatewayError | undefined> {
    const firstStep = iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race<FirstStep | { kind: "slow" }>([
      firstStep.then(
        (step) => ({ kind: "step", step }),
        (error: unknown) => ({ kind: "thrown", error }),
      ),
      new Promise<{ kind: "slow" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "slow" }), timing.firstPartWaitMs);
      }),
    ]);
    clearTimeout(timer);
    const failure =
      this.stoppedWith ??
      (waited.kind === "slow"
        ? undefined
        : waited.kind === "thrown"
          ? toGatewayError(waited.error)
          : waited.step.done
            ? new GatewayError("provider_unavailable", "Upstream stream ended without any output")
            : waited.step.value.type === "error"
              ? createGatewayErrorFromInfo(waited.step.value.error)
              : undefined);
    if (failure) {
      void iterator.return?.().catch(() => {});
      return failure;
    }
    this.slowStart = waited.kind === "slow";
    this.iterator = iterator;
    this.pendingFirst = firstStep;
    return undefined;
  }

  /** true when the first part has not arrived yet (the response starts without it). */
  get startedBeforeFirstPart(): boolean {
    return this.slowStart;
  }

  /** The candidate that served (after `start` resolved). */
  get servedBy(): RouteCandidate | undefined {
    return this.serving?.candidate;
  }

  /**
   * What the serving route's upstream went without (`tools[4](namespace)`, `thinking.display`), for
   * the response's `X-Hi-Dropped`; empty before one served or when nothing was lost.
   */
  get dropped(): readonly string[] {
    return this.serving === undefined ? [] : (this.attempts[this.serving.index]?.dropped ?? []);
  }

  /**
   * Streamed: the parts, in upstream order, ending after `finish` or an `error` part. However the
   * consumer stops (done, cancelled, or it threw and the loop returned early), the run settles.
   */
  async *parts(): AsyncGenerator<CanonicalStreamPart> {
    let completed = false;
    try {
      let next = this.pendingFirst ? await this.take(this.pendingFirst) : undefined;
      // Started without its first part, and it failed before any: fail over as before the start.
      while (this.slowStart && (next === undefined || next.type === "error") && !this.cancelled) {
        if (this.stoppedWith) break;
        const failure =
          next === undefined
            ? new GatewayError("provider_unavailable", "Upstream stream ended without any output")
            : createGatewayErrorFromInfo(next.error);
        const end = await this.failOverBeforeFirstPart(failure);
        if (end) {
          next = this.cancelled ? undefined : toErrorPart(end.error);
          break;
        }
        next = this.pendingFirst ? await this.take(this.pendingFirst) : undefined;
      }
      while (next !== undefined) {
        this.observe(next);
        if (this.loop === undefined) {
          this.keep(next);
          yield next;
        } else {
          for (const shown of this.loop.transform(next)) {
            this.keep(shown);
            yield shown;
          }
        }
        if (next.type === "error" || this.cancelled) break;
        next = await this.take(this.iterator!.next());
        if (
          next === undefined &&
          this.loop !== undefined &&
          this.roundOpen &&
          this.finishReason !== undefined
        ) {
          next = yield* this.nextRound(this.loop);
        }
      }
      if (this.finishReason === undefined && !this.error && !this.cancelled) {
        const error = new GatewayError(
          "provider_unavailable",
          "Upstream stream ended without a finish reason",
        );
        this.error = error;
        yield toErrorPart(error);
      }
      completed = true;
    } finally {
      if (!completed && !this.cancelled && !this.error && this.finishReason === undefined) {
        // The consumer stopped before the end (a writer or encoder threw): stop the upstream.
        this.error = new GatewayError("internal_error", "Internal error");
        this.abort(this.error);
        void this.iterator?.return?.().catch(() => {});
      }
      void this.settle();
    }
  }

  /** Keeps a streamed part for the response cache, until the answer outgrows what one entry may hold. */
  private keep(part: CanonicalStreamPart): void {
    const kept = this.kept;
    if (kept === undefined) return;
    // The parts' text dominates an entry; the fixed part per entry covers the JSON around it.
    kept.bytes +=
      64 + ("delta" in part ? part.delta.length : 0) + ("arguments" in part ? part.arguments.length : 0);
    if (kept.bytes > this.admitted.cache!.maxBytes) this.kept = undefined;
    else kept.parts.push(part);
  }

  /** A cached request's miss that completed: its answer goes to the cache (the engine's hook). */
  private async storeAnswer(status: GenerationOutcome["status"]): Promise<void> {
    const cache = this.admitted.cache;
    if (cache === undefined || cache.hit || status !== "ok") return;
    // Cut answers (length, content filter) and failures are never stored.
    if (
      this.finishReason !== "stop" &&
      this.finishReason !== "stop-sequence" &&
      this.finishReason !== "tool-calls"
    )
      return;
    const result = this.admitted.request.stream
      ? this.kept === undefined
        ? undefined
        : foldStreamParts(this.kept.parts)
      : this.result;
    this.kept = undefined;
    if (result !== undefined) await this.hooks.keepAnswer(this.admitted, result);
  }

  /**
   * The next part to pass on: undefined at the end (or once cancelled), an `error` part for a
   * failure, and once stopped, the stop's error instead of whatever the aborted upstream gave.
   */
  private async take(
    step: Promise<IteratorResult<CanonicalStreamPart>>,
  ): Promise<CanonicalStreamPart | undefined> {
    let part: CanonicalStreamPart | undefined;
    try {
      const result = await step;
      part = result.done ? undefined : result.value;
    } catch (thrown) {
      if (this.cancelled) return undefined;
      part = toErrorPart(toGatewayError(thrown));
    }
    if (this.cancelled) return undefined;
    // A stop after the upstream finished changes nothing: the stream is complete.
    if (this.stoppedWith === undefined || this.finishReason !== undefined) return part;
    return toErrorPart(this.stoppedWith);
  }

  /**
   * Streamed, a round of the tool loop has ended: runs its server calls (their results are
   * yielded), then either opens the next round and returns its first part, or yields the run's
   * summed usage and its finish and returns undefined.
   */
  private async *nextRound(
    loop: ToolLoop,
  ): AsyncGenerator<CanonicalStreamPart, CanonicalStreamPart | undefined> {
    this.closeRound(loop);
    const decision: RoundDecision = yield* loop.finishRound(this.reserveRound, this.runSignal);
    if (decision.kind === "end") {
      this.finishReason = decision.finish.reason;
      yield { type: "usage", usage: this.completedUsage ?? createEmptyUsage() };
      yield decision.finish;
      return undefined;
    }
    if (this.cancelled) return undefined;
    if (this.stoppedWith) return toErrorPart(this.stoppedWith);
    this.roundOpen = true;
    const call = toUpstreamCall(this.admitted.call, decision.request, this.runSignal);
    this.iterator = this.admitted.adapter.stream(call)[Symbol.asyncIterator]();
    return await this.take(this.iterator.next());
  }

  /**
   * Non-streamed, with server tools: the serving attempt's result is the first round; each round's
   * result goes through the tool loop as parts, further rounds are called on the serving route,
   * and the parts fold into the one result the answer renders. Undefined when it completed, else
   * the error the run ends with.
   */
  private async continueNonStreamedLoop(): Promise<{ error: GatewayError } | undefined> {
    const loop = this.loop;
    if (loop === undefined || this.admitted.request.stream || this.result === undefined) return undefined;
    this.roundOpen = true;
    const shown: CanonicalStreamPart[] = [];
    let result: CanonicalResult = this.result;
    for (;;) {
      for (const part of convertResultToParts(result)) shown.push(...loop.transform(part));
      this.closeRound(loop);
      const steps = loop.finishRound(this.reserveRound, this.runSignal);
      let step = await steps.next();
      while (!step.done) {
        shown.push(step.value);
        step = await steps.next();
      }
      const decision = step.value;
      if (decision.kind === "end") {
        this.finishReason = decision.finish.reason;
        shown.push({ type: "usage", usage: this.completedUsage ?? createEmptyUsage() }, decision.finish);
        break;
      }
      if (this.cancelled || this.stoppedWith) {
        return { error: this.stoppedWith ?? toGatewayError(this.signal.reason) };
      }
      this.roundOpen = true;
      this.callInFlight = true;
      try {
        const call = toUpstreamCall(this.admitted.call, decision.request, this.runSignal);
        result = await this.admitted.adapter.generate(call);
      } catch (thrown) {
        this.callInFlight = false;
        if (this.cancelled) return { error: toGatewayError(this.signal.reason) };
        return { error: this.stoppedWith ?? toGatewayError(thrown) };
      }
      this.callInFlight = false;
      this.observeResult(result);
    }
    this.result = foldStreamParts(shown);
    return undefined;
  }

  /** The tool loop's round ended: it is metered now, and the next one starts from nothing. */
  private closeRound(loop: ToolLoop): void {
    if (!this.roundOpen) return;
    const metered = this.hooks.meter(
      this.admitted,
      {
        reported: this.usage,
        finished: this.finishReason !== undefined,
        estimateOutputTokens: this.estimateOutput,
      },
      loop.round === 1 ? undefined : loop.roundRequest,
    );
    this.completedUsage = addUsage(this.completedUsage ?? createEmptyUsage(), metered.usage);
    this.completedRounds.push(metered.usage);
    this.completedEstimated ||= metered.estimated;
    this.roundOpen = false;
    this.usage = undefined;
    this.finishReason = undefined;
    this.output = new DeliveredOutput(this.admitted.call.maxOutputTokens);
    this.estimateOutput = () => this.output.estimateTokens();
  }

  /** The tool loop's reservation step, with what the run has spent so far. */
  private readonly reserveRound = (
    toolsMicroUsd: number,
    next: { request: CanonicalRequest; resultTokens: number } | undefined,
  ): Promise<boolean> =>
    this.hooks.reserveRound(
      this.admitted,
      this.completedRounds,
      (this.loop?.toolCostMicroUsd ?? 0) + this.documentMicroUsd,
      toolsMicroUsd,
      next,
    );

  get failure(): GatewayError | undefined {
    return this.error;
  }

  /** The client went away: stop the upstream and settle what was produced. Idempotent. */
  cancel(): void {
    if (this.cancelled || this.settlement) return;
    this.cancelled = true;
    this.cancelledDuringCall = this.callInFlight;
    this.abort(new Error("client disconnected"));
    void this.iterator?.return?.().catch(() => {});
    // Between attempts or mid-stream: nothing more will be observed, so settle now. During an
    // attempt the attempt loop settles when the aborted call returns.
    if (this.serving !== undefined) void this.settle();
  }

  /**
   * Ends the generation on the gateway's side (a deadline): the upstream call is aborted and the
   * parts end with `error` as their last part, which the client gets as the format's error event.
   * What was delivered is billed as for any stream that failed mid-way. No effect once it ended.
   */
  stop(error: GatewayError): void {
    if (this.cancelled || this.stoppedWith || this.settlement) return;
    this.stoppedWith = error;
    this.abort(error);
  }

  /** Aborts the call in flight (or the serving stream) and the run's own signal. */
  private abort(reason: unknown): void {
    this.abortReason = reason;
    this.attemptController?.abort(reason);
    this.runController?.abort(reason);
  }

  /** The run's signal, aborted with the run (already aborted when asked for after that). */
  private get runSignal(): AbortSignal {
    if (this.runController === undefined) {
      this.runController = new AbortController();
      if (this.abortReason !== undefined) this.runController.abort(this.abortReason);
    }
    return this.runController.signal;
  }

  /** The run's settlement, computed and written exactly once whoever asks first. */
  settle(): Promise<Settlement> {
    this.settlement ??= this.computeSettlement();
    return this.settlement;
  }

  private async computeSettlement(): Promise<Settlement> {
    clearTimeout(this.deadlineTimer);
    this.signal.removeEventListener("abort", this.onClientGone);
    const status: GenerationOutcome["status"] = this.cancelled ? "cancelled" : this.error ? "error" : "ok";
    // No charge for nothing: a failure before any output costs 0, and so does a caller that left
    // before any upstream was called or while the run waited between attempts. One that left
    // while a call was in flight is billed the prompt (the upstream likely processed it), at the
    // prices of the route it was waiting for.
    const promptProcessed = this.serving !== undefined || this.cancelledDuringCall;
    const produced = this.output.produced || this.completedUsage !== undefined;
    const metered =
      (status === "error" && !produced) || (status === "cancelled" && !promptProcessed)
        ? undefined
        : this.meterRun(status);
    const usage = metered?.usage ?? createEmptyUsage();
    // Reading the documents is billed with the prompt that carried their text, not without it.
    const documentMicroUsd = metered === undefined ? 0 : this.documentMicroUsd;
    const toolMicroUsd = (this.loop?.toolCostMicroUsd ?? 0) + documentMicroUsd;
    const costMicroUsd =
      metered || toolMicroUsd > 0 ? this.hooks.cost(this.admitted, metered?.rounds ?? [], toolMicroUsd) : 0;
    this.closeServingAttempt(status);
    const outcome = createOutcome(
      this.admitted,
      status,
      usage,
      costMicroUsd,
      this.finishReason ?? null,
      this.upstreamModel,
    );
    outcome.usageEstimated = metered?.estimated === true;
    outcome.attempts = this.attempts;
    if (this.loop !== undefined) outcome.toolCostsMicroUsd = { ...this.loop.toolCosts };
    if (documentMicroUsd > 0) {
      const costs = outcome.toolCostsMicroUsd;
      costs.pdf = (costs.pdf ?? 0) + documentMicroUsd;
    }
    if (this.error && status === "error") outcome.errorCode = this.error.code;
    if (this.admitted.cache?.hit === true) outcome.cacheHit = true;
    const served = this.serving === undefined ? undefined : this.attempts[this.serving.index];
    await this.hooks.settle(this.admitted, outcome, served, this.loop?.executed ?? []);
    void this.storeAnswer(status);
    const settlement: Settlement = {
      usage,
      costMicroUsd,
      finishReason: this.finishReason ?? (this.error ? "error" : "stop"),
    };
    if (this.loop !== undefined) settlement.serverToolCalls = { ...this.loop.callCounts };
    return settlement;
  }

  /**
   * The run's usage: the upstream call's, or with the tool loop the rounds already metered plus
   * the one still open (it ended early: the client left, a deadline, a failure).
   */
  private meterRun(status: GenerationOutcome["status"]): MeteredUsage & { rounds: CanonicalUsage[] } {
    const current = () =>
      this.hooks.meter(
        this.admitted,
        {
          reported: this.usage,
          finished: this.finishReason !== undefined,
          estimateOutputTokens: this.estimateOutput,
        },
        this.loop === undefined || this.loop.round === 1 ? undefined : this.loop.roundRequest,
      );
    if (this.loop === undefined) {
      const metered = current();
      return {
        usage: metered.usage,
        estimated: metered.estimated,
        capped: metered.capped,
        rounds: [metered.usage],
      };
    }
    let usage = this.completedUsage ?? createEmptyUsage();
    const rounds = [...this.completedRounds];
    let estimated = this.completedEstimated;
    // A later round that failed before any output costs nothing, as any failed call does.
    if (this.roundOpen && !(status === "error" && !this.output.produced)) {
      const open = current();
      usage = addUsage(usage, open.usage);
      rounds.push(open.usage);
      estimated ||= open.estimated;
    }
    return { usage, estimated, capped: false, rounds };
  }

  /** The serving attempt's record tells how it ended and how long it ran in all. */
  private closeServingAttempt(status: GenerationOutcome["status"]): void {
    if (this.serving === undefined) return;
    const attempt = this.attempts[this.serving.index];
    attempt.latencyMs = Math.round(performance.now() - this.serving.startedAt);
    if (status === "cancelled") attempt.outcome = "cancelled";
    else if (this.error) attempt.outcome = this.error.code;
  }

  private recordAttempt(
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

  private observeResult(result: CanonicalResult): void {
    this.result = result;
    this.usage = result.usage;
    this.finishReason = result.finishReason;
    this.upstreamModel = result.upstreamModel;
    this.estimateOutput = () => estimateTextTokens(collectResultText(result));
  }

  private observe(part: CanonicalStreamPart): void {
    switch (part.type) {
      case "text-delta":
      case "reasoning-delta":
      case "tool-input-delta":
        this.output.append(part.delta);
        break;
      case "tool-call":
        this.output.append(part.name);
        break;
      case "usage":
        this.usage = part.usage;
        break;
      case "finish":
        this.finishReason = part.reason;
        break;
      case "response-metadata":
        this.upstreamModel = part.upstreamModel ?? this.upstreamModel;
        break;
      case "error":
        this.error = createGatewayErrorFromInfo(part.error);
        break;
    }
  }

  /** Waits between passes; a client that leaves or a deadline ends the wait at once. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const signal = this.runSignal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Every candidate was skipped by its breaker: the caller is told what the routes last failed
   * with (a refused credential stays `provider_auth`), else that they are down, with Retry-After
   * until the first one takes a probe.
   */
  private createAllOpenError(candidates: readonly RouteCandidate[]): GatewayError {
    for (let index = candidates.length - 1; index >= 0; index--) {
      const last = this.services.breakers.lastFailure(candidates[index].key);
      if (last) return last;
    }
    const now = performance.now();
    const reopens = candidates
      .map((candidate) => this.services.breakers.reopensAt(candidate.key))
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

/**
 * The call as the adapter gets it: the attempt's call with `request` and its own signal, every
 * field written out (a literal never starts with a spread: CONTRIBUTING.md).
 */
function toUpstreamCall(
  call: Omit<UpstreamCall, "signal">,
  request: CanonicalRequest,
  signal: AbortSignal,
): UpstreamCall {
  return {
    request,
    model: call.model,
    provider: call.provider,
    upstreamModel: call.upstreamModel,
    maxOutputTokens: call.maxOutputTokens,
    signal,
    requestId: call.requestId,
    traceHeaders: call.traceHeaders,
  };
}

function toErrorPart(error: GatewayError): CanonicalStreamPart {
  return { type: "error", error: { code: error.code, message: error.message } };
}
