/**
 * One generation from its first upstream call to its settlement. The run asks its failover
 * (route-failover.ts) which route candidate to try next and makes the attempt, until one answers.
 * Failover ends once an attempt has produced output: a streamed answer commits to its route when
 * its first part arrives (open-stream.ts). A response that started without it (keep-alives only)
 * still fails over when that route fails before any part, since no output has reached the client.
 *
 * The run settles itself, exactly once, on every way out: the upstream finished or failed, the
 * client left (at any stage: before the first call, between attempts, mid-stream), the deadline
 * stopped it (run-control.ts), or whoever consumed the parts stopped early (a writer or encoder
 * that threw). A non-streamed answer is the same run with one step (the adapter's whole result)
 * instead of parts; both settle through `computeSettlement` with the generation's billing
 * (generation-billing.ts), and both report failures as a GatewayError: one error form from the
 * adapter to the writer, an `error` part carrying the GatewayError itself.
 *
 * Each attempt is one upstream round; a run that needs several rounds for one answer (server
 * tools, tool-loop.ts) adds them after the serving attempt, on the route that served, under the
 * same deadline and settlement: each round is metered when it ends (run-usage.ts), the tools'
 * costs are added, and a round that fails after the first one ends the answer with an error
 * (streamed: in band).
 */
import type { CanonicalResult, CanonicalStreamPart } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import type { CanonicalRequest } from "../canonical/request.js";
import type { Settlement } from "../canonical/settlement.js";
import { GatewayError, readStreamError, toGatewayError } from "../errors/gateway-error.js";
import { convertResultToParts } from "../providers/convert-result-to-parts.js";
import { foldStreamParts } from "../providers/fold-stream-parts.js";
import { type ProviderAdapter, routeReadsPdf } from "../providers/provider-adapter.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import { createDeadlineError } from "./create-deadline-error.js";
import { createOutcome } from "./create-outcome.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";
import { listDroppedFor, refuseLoss } from "./judge-loss.js";
import { createEmptyStreamError, openStream } from "./open-stream.js";
import type { AdapterRegistry, DocumentSession, DocumentsForRoute } from "./ports.js";
import type { RouteCandidate } from "./route-candidates.js";
import { type FailoverServices, RouteFailover } from "./route-failover.js";
import { RunControl } from "./run-control.js";
import { RunUsage } from "./run-usage.js";
import { toUpstreamCall } from "./to-upstream-call.js";
import { type ReserveRound, type RoundDecision, ToolLoop } from "./tool-loop.js";

/** What every run is given; one set for all runs. */
export interface RunServices extends FailoverServices {
  adapters: AdapterRegistry;
}

export interface RunTiming {
  /** Streamed: how long the response waits for the first part before it starts without it. */
  firstPartWaitMs: number;
}

export class GenerationRun {
  /** Every upstream call so far, in order (the record's `attempts`). */
  readonly attempts: GenerationAttempt[] = [];
  /** Non-streamed: the serving attempt's whole answer. */
  result?: CanonicalResult;
  private error?: GatewayError;
  private readonly control = new RunControl();
  private readonly usage: RunUsage;
  private readonly failover: RouteFailover;
  private readonly billing: GenerationBilling;
  private deadlineTimer?: NodeJS.Timeout;
  private settlement?: Promise<Settlement>;
  private iterator?: AsyncIterator<CanonicalStreamPart>;
  private pendingFirst?: Promise<IteratorResult<CanonicalStreamPart>>;
  /** The serving attempt (index in `attempts`), when it started, and how to abandon its call. */
  private serving?: { index: number; startedAt: number; candidate: RouteCandidate; abandon: () => void };
  private timing: RunTiming = { firstPartWaitMs: 0 };
  /** The server-tool loop, when the request activated server tools. */
  private readonly loop?: ToolLoop;
  /** What reading the documents cost for the latest attempt's route (the serving one's, once one serves). */
  private documentMicroUsd = 0;
  /** The response started before the upstream's first part arrived. */
  private slowStart = false;
  private readonly onClientGone = () => this.cancel();

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly signal: AbortSignal,
    private readonly services: RunServices,
  ) {
    this.billing = admitted.billing;
    this.usage = new RunUsage(admitted.call.maxOutputTokens);
    this.failover = new RouteFailover(admitted.candidates, admitted.startedAt, admitted.deadline, services);
    if (admitted.serverTools !== undefined) {
      this.loop = new ToolLoop(admitted.serverTools, admitted.call.request, {
        maxRounds: admitted.maxToolRounds,
        requestId: admitted.requestId,
        maxNativeCallsPerRound: admitted.maxNativeCallsPerRound,
      });
    }
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
    services: RunServices,
    timing: RunTiming,
  ): Promise<GenerationRun> {
    const run = new GenerationRun(admitted, signal, services);
    if (signal.aborted) {
      run.control.cancelled = true;
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
    if (run.control.cancelled) failure.error = toGatewayError(signal.reason);
    else run.error = failure.error;
    await run.settle();
    throw failure.error;
  }

  /**
   * The attempts, from where the failover stands; undefined once an attempt serves, else the
   * error the run ends with.
   */
  private async runAttempts(): Promise<{ error: GatewayError } | undefined> {
    const { failover, control } = this;
    for (;;) {
      const step = failover.next(this.attempts.length);
      if (step.kind === "end") return step;
      if (step.kind === "skip") {
        this.admitted.trace?.startAttempt(this.attempts.length);
        this.recordAttempt(step.candidate, "circuit_open", performance.now());
        continue;
      }
      if (step.kind === "wait") {
        await control.sleep(step.ms);
        if (control.interrupted) return { error: control.stoppedWith ?? toGatewayError(this.signal.reason) };
        failover.startNextPass();
        continue;
      }
      const error = await this.attempt(step.candidate, step.anotherRouteWaits);
      if (error === undefined) return undefined;
      const end = this.judgeFailure(step.candidate, error);
      if (end) return end;
    }
  }

  /** A failed attempt: the run's end when no other attempt may follow (failover's call, unless interrupted). */
  private judgeFailure(candidate: RouteCandidate, error: GatewayError): { error: GatewayError } | undefined {
    if (this.control.interrupted) {
      this.failover.release(candidate);
      return { error: this.control.stoppedWith ?? error };
    }
    return this.failover.judge(candidate, error);
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
    const { control, admitted } = this;
    // Stopped or left since the last attempt: no call is made.
    if (control.abortReason !== undefined) return control.stoppedWith ?? toGatewayError(this.signal.reason);
    const adapter = this.services.adapters.get(candidate.route.provider.kind);
    const startedAt = performance.now();
    const traceHeaders = admitted.trace?.startAttempt(this.attempts.length);
    if (!adapter) {
      const error = new GatewayError(
        "internal_error",
        `No adapter for provider kind "${candidate.route.provider.kind}"`,
      );
      this.recordAttempt(candidate, error.code, startedAt);
      return error;
    }
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
    control.attemptController = attemptController;
    // Stopped or left while the documents were read: the call starts aborted.
    if (control.abortReason !== undefined) attemptController.abort(control.abortReason);
    const call = toUpstreamCall(admitted.call, admitted.call.request, attemptController.signal);
    call.anotherRouteWaits = anotherRouteWaits;
    const dropped = listDroppedFor(adapter, call);
    const refusal = refuseLoss(call.request, dropped, candidate.model.slug);
    if (refusal !== undefined) {
      control.attemptController = undefined;
      this.recordAttempt(candidate, refusal.code, startedAt, dropped);
      return refusal;
    }
    let error: GatewayError | undefined;
    control.callInFlight = true;
    try {
      if (!admitted.request.stream) {
        this.observeResult(await adapter.generate(call));
      } else {
        const iterator = adapter.stream(call)[Symbol.asyncIterator]();
        const opened = await openStream(iterator, this.timing.firstPartWaitMs);
        error = control.stoppedWith ?? (opened.kind === "failed" ? opened.error : undefined);
        if (error !== undefined) {
          void iterator.return?.().catch(() => {});
        } else if (opened.kind === "opened") {
          this.slowStart = opened.slow;
          this.iterator = iterator;
          this.pendingFirst = opened.first;
        }
      }
    } catch (thrown) {
      error = toGatewayError(thrown);
    }
    control.callInFlight = false;
    if (error !== undefined) {
      control.attemptController = undefined;
      attemptController.abort(error);
      this.recordAttempt(candidate, control.cancelled ? "cancelled" : error.code, startedAt, dropped);
      return error;
    }
    // A streamed attempt that serves stays the one a stop or a cancel aborts; a non-streamed one is over.
    if (!admitted.request.stream) control.attemptController = undefined;
    this.failover.recordSuccess(candidate);
    this.usage.roundOpen = true;
    this.serving = {
      index: this.attempts.length,
      startedAt,
      candidate,
      abandon: () => {
        if (control.attemptController === attemptController) control.attemptController = undefined;
        attemptController.abort(new GatewayError("provider_timeout", "Attempt abandoned"));
      },
    };
    this.recordAttempt(candidate, "ok", startedAt, dropped);
    return undefined;
  }

  /**
   * Sets the call's request (the route's first request, from `callFor`) to what this route reads of
   * the request's documents: the files, or their text. A document that cannot be read ends the run
   * with its error (`invalid_request` naming the part); that is no upstream attempt, so none is recorded.
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
        this.control.signal,
      );
    } catch (thrown) {
      return this.control.stoppedWith ?? toGatewayError(thrown);
    }
    this.admitted.call.request = read.request;
    this.documentMicroUsd = read.costMicroUsd;
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
    const { control, usage } = this;
    let completed = false;
    try {
      let next = this.pendingFirst ? await this.take(this.pendingFirst) : undefined;
      // Started without its first part, and it failed before any: fail over as before the start.
      while (this.slowStart && (next === undefined || next.type === "error") && !control.cancelled) {
        if (control.stoppedWith) break;
        const failure = next === undefined ? createEmptyStreamError() : readStreamError(next.error);
        const end = await this.failOverBeforeFirstPart(failure);
        if (end) {
          next = control.cancelled ? undefined : toErrorPart(end.error);
          break;
        }
        next = this.pendingFirst ? await this.take(this.pendingFirst) : undefined;
      }
      while (next !== undefined) {
        if (next.type === "error") this.error = readStreamError(next.error);
        else usage.observe(next);
        if (this.loop === undefined) yield next;
        else for (const shown of this.loop.transform(next)) yield shown;
        if (next.type === "error" || control.cancelled) break;
        next = await this.take(this.iterator!.next());
        if (
          next === undefined &&
          this.loop !== undefined &&
          usage.roundOpen &&
          usage.finishReason !== undefined
        ) {
          next = yield* this.nextRound(this.loop);
        }
      }
      if (usage.finishReason === undefined && !this.error && !control.cancelled) {
        const error = new GatewayError(
          "provider_unavailable",
          "Upstream stream ended without a finish reason",
        );
        this.error = error;
        yield toErrorPart(error);
      }
      completed = true;
    } finally {
      if (!completed && !control.cancelled && !this.error && usage.finishReason === undefined) {
        // The consumer stopped before the end (a writer or encoder threw): stop the upstream.
        this.error = new GatewayError("internal_error", "Internal error");
        control.abort(this.error);
        void this.iterator?.return?.().catch(() => {});
      }
      void this.settle();
    }
  }

  /**
   * The next part to pass on: undefined at the end (or once cancelled), an `error` part for a
   * failure, and once stopped, the stop's error instead of whatever the aborted upstream gave.
   */
  private async take(
    step: Promise<IteratorResult<CanonicalStreamPart>>,
  ): Promise<CanonicalStreamPart | undefined> {
    const { control } = this;
    let part: CanonicalStreamPart | undefined;
    try {
      const result = await step;
      part = result.done ? undefined : result.value;
    } catch (thrown) {
      if (control.cancelled) return undefined;
      part = toErrorPart(toGatewayError(thrown));
    }
    if (control.cancelled) return undefined;
    // A stop after the upstream finished changes nothing: the stream is complete.
    if (control.stoppedWith === undefined || this.usage.finishReason !== undefined) return part;
    return toErrorPart(control.stoppedWith);
  }

  /**
   * Streamed, a round of the tool loop has ended: runs its server calls (their results are
   * yielded), then either opens the next round and returns its first part, or yields the run's
   * summed usage and its finish and returns undefined.
   */
  private async *nextRound(
    loop: ToolLoop,
  ): AsyncGenerator<CanonicalStreamPart, CanonicalStreamPart | undefined> {
    this.closeRound();
    const decision: RoundDecision = yield* loop.finishRound(this.reserveRound, this.control.signal);
    if (decision.kind === "end") {
      this.usage.finishReason = decision.finish.reason;
      yield { type: "usage", usage: this.usage.completedUsage ?? createEmptyUsage() };
      yield decision.finish;
      return undefined;
    }
    if (this.control.cancelled) return undefined;
    if (this.control.stoppedWith) return toErrorPart(this.control.stoppedWith);
    this.usage.roundOpen = true;
    const call = toUpstreamCall(this.admitted.call, decision.request, this.control.signal);
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
    const { loop, control, usage } = this;
    if (loop === undefined || this.admitted.request.stream || this.result === undefined) return undefined;
    usage.roundOpen = true;
    const shown: CanonicalStreamPart[] = [];
    let result: CanonicalResult = this.result;
    for (;;) {
      for (const part of convertResultToParts(result)) shown.push(...loop.transform(part));
      this.closeRound();
      const steps = loop.finishRound(this.reserveRound, control.signal);
      let step = await steps.next();
      while (!step.done) {
        shown.push(step.value);
        step = await steps.next();
      }
      const decision = step.value;
      if (decision.kind === "end") {
        usage.finishReason = decision.finish.reason;
        shown.push({ type: "usage", usage: usage.completedUsage ?? createEmptyUsage() }, decision.finish);
        break;
      }
      if (control.interrupted) return { error: control.stoppedWith ?? toGatewayError(this.signal.reason) };
      usage.roundOpen = true;
      control.callInFlight = true;
      try {
        const call = toUpstreamCall(this.admitted.call, decision.request, control.signal);
        result = await this.admitted.adapter.generate(call);
      } catch (thrown) {
        control.callInFlight = false;
        if (control.cancelled) return { error: toGatewayError(this.signal.reason) };
        return { error: control.stoppedWith ?? toGatewayError(thrown) };
      }
      control.callInFlight = false;
      this.observeResult(result);
    }
    this.result = foldStreamParts(shown);
    return undefined;
  }

  /** The request of the tool loop's current round when it is not the first one's. */
  private get laterRoundRequest(): CanonicalRequest | undefined {
    const loop = this.loop;
    return loop === undefined || loop.round === 1 ? undefined : loop.roundRequest;
  }

  /** The tool loop's round ended: it is metered now, and the next one starts from nothing. */
  private closeRound(): void {
    this.usage.closeRound(this.billing, this.laterRoundRequest, this.admitted.call.maxOutputTokens);
  }

  /** The tool loop's reservation step, with what the run has spent so far (generation-billing.ts). */
  private readonly reserveRound: ReserveRound = (toolsMicroUsd, next) =>
    this.billing.reserveRound(
      this.usage.completedRounds,
      (this.loop?.toolCostMicroUsd ?? 0) + this.documentMicroUsd,
      toolsMicroUsd,
      next,
    );

  get failure(): GatewayError | undefined {
    return this.error;
  }

  /** The client went away: stop the upstream and settle what was produced. Idempotent. */
  cancel(): void {
    if (this.control.cancelled || this.settlement) return;
    this.control.cancel();
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
    if (this.control.interrupted || this.settlement) return;
    this.control.stop(error);
  }

  /** The run's settlement, computed and written exactly once whoever asks first. */
  settle(): Promise<Settlement> {
    this.settlement ??= this.computeSettlement();
    return this.settlement;
  }

  private async computeSettlement(): Promise<Settlement> {
    clearTimeout(this.deadlineTimer);
    this.signal.removeEventListener("abort", this.onClientGone);
    const { control, usage, loop } = this;
    const status: GenerationOutcome["status"] = control.cancelled ? "cancelled" : this.error ? "error" : "ok";
    // No charge for nothing: a failure before any output costs 0, and so does a caller that left
    // before any upstream was called or while the run waited between attempts. One that left
    // while a call was in flight is billed the prompt (the upstream likely processed it), at the
    // prices of the route it was waiting for.
    const promptProcessed = this.serving !== undefined || control.cancelledDuringCall;
    const produced = usage.produced || usage.completedUsage !== undefined;
    const metered =
      (status === "error" && !produced) || (status === "cancelled" && !promptProcessed)
        ? undefined
        : usage.meterRun(this.billing, status, this.laterRoundRequest, loop !== undefined);
    const total = metered?.usage ?? createEmptyUsage();
    // Reading the documents is billed with the prompt that carried their text, not without it.
    const documentMicroUsd = metered === undefined ? 0 : this.documentMicroUsd;
    const toolMicroUsd = (loop?.toolCostMicroUsd ?? 0) + documentMicroUsd;
    const costMicroUsd =
      metered || toolMicroUsd > 0 ? this.billing.price(metered?.rounds ?? [], toolMicroUsd) : 0;
    this.closeServingAttempt(status);
    const finishReason = usage.finishReason ?? null;
    const outcome = createOutcome(
      this.admitted,
      status,
      total,
      costMicroUsd,
      finishReason,
      usage.upstreamModel,
    );
    outcome.usageEstimated = metered?.estimated === true;
    outcome.attempts = this.attempts;
    if (loop !== undefined) outcome.toolCostsMicroUsd = { ...loop.toolCosts };
    if (documentMicroUsd > 0) {
      const costs = outcome.toolCostsMicroUsd;
      costs.pdf = (costs.pdf ?? 0) + documentMicroUsd;
    }
    if (this.error && status === "error") outcome.errorCode = this.error.code;
    const served = this.serving === undefined ? undefined : this.attempts[this.serving.index];
    await this.billing.settle(outcome, served, loop?.executed ?? []);
    const settlement: Settlement = {
      usage: total,
      costMicroUsd,
      finishReason: usage.finishReason ?? (this.error ? "error" : "stop"),
    };
    if (loop !== undefined) settlement.serverToolCalls = { ...loop.callCounts };
    return settlement;
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
    this.usage.observeResult(result);
  }
}

/** The run's own failure as the part that ends the stream: the GatewayError itself. */
function toErrorPart(error: GatewayError): CanonicalStreamPart {
  return { type: "error", error };
}
