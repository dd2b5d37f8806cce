/**
 * One generation from its first upstream call to its settlement. The run asks its failover
 * (route-failover.ts) which route to try next and makes the attempt, until one answers. Failover
 * ends once an attempt has produced output: a streamed answer commits to its route when its first
 * part arrives (serving-stream.ts); one that started without it (keep-alives only) still fails
 * over when that route fails before any part, since no output has reached the client.
 *
 * The run settles itself (settle-run.ts, with the generation's billing), exactly once, on every
 * way out: the upstream finished or failed, the client left at any stage, the deadline stopped it
 * (run-control.ts), or whoever consumed the parts stopped early. A non-streamed answer is the same
 * run with one step (the adapter's whole result) instead of parts. Failures are one form from the
 * adapter to the writer: a GatewayError, carried as such by an `error` part. With server tools,
 * the rounds after the serving attempt run on the route that served (run-tool-rounds.ts).
 */
import type { CanonicalResult, CanonicalStreamPart } from "../canonical/index.js";
import type { Settlement } from "../canonical/settlement.js";
import { GatewayError, readStreamError, toGatewayError } from "../errors/gateway-error.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import { AnswerKeeper } from "./answer-keeper.js";
import { AttemptLog } from "./attempt-log.js";
import { createDeadlineError } from "./create-deadline-error.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { GenerationAttempt, GenerationOutcome } from "./generation-record.js";
import { listDroppedFor, refuseLoss } from "./judge-loss.js";
import { createEmptyStreamError } from "./open-stream.js";
import type { AdapterRegistry, AnswerCache, ClientSignal } from "./ports.js";
import { readRouteDocuments } from "./read-route-documents.js";
import type { RouteCandidate } from "./route-candidates.js";
import { type FailoverServices, RouteFailover } from "./route-failover.js";
import { RunControl } from "./run-control.js";
import { ToolRounds } from "./run-tool-rounds.js";
import { RunUsage } from "./run-usage.js";
import { ServingStream, toErrorPart } from "./serving-stream.js";
import { settleRun } from "./settle-run.js";
import { toUpstreamCall } from "./to-upstream-call.js";
import { ToolLoop } from "./tool-loop.js";

/** What every run is given; one set for all runs. */
export interface RunServices extends FailoverServices {
  adapters: AdapterRegistry;
  /** The response cache a cached request's miss stores its complete answer in (answer-keeper.ts). */
  answerCache?: AnswerCache;
}

export interface RunTiming {
  /** Streamed: how long the response waits for the first part before it starts without it. */
  firstPartWaitMs: number;
}

export class GenerationRun {
  /** Every upstream call so far, and which one serves (the record's `attempts`). */
  private readonly log = new AttemptLog();
  /** Non-streamed: the serving attempt's whole answer. */
  result?: CanonicalResult;
  private error?: GatewayError;
  private readonly control = new RunControl();
  private readonly usage: RunUsage;
  private readonly failover: RouteFailover;
  private readonly billing: GenerationBilling;
  private deadlineTimer?: NodeJS.Timeout;
  private settlement?: Promise<Settlement>;
  private readonly stream: ServingStream;
  private timing: RunTiming = { firstPartWaitMs: 0 };
  /** The server-tool loop and the rounds it adds, when the request activated server tools. */
  private readonly loop?: ToolLoop;
  private readonly rounds?: ToolRounds;
  private readonly keeper?: AnswerKeeper;
  private readonly onClientGone = () => this.cancel();

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly signal: ClientSignal,
    private readonly services: RunServices,
  ) {
    this.billing = admitted.billing;
    this.usage = new RunUsage(admitted.call.maxOutputTokens);
    this.stream = new ServingStream(admitted, this.control, this.usage);
    this.failover = new RouteFailover(admitted.candidates, admitted.startedAt, admitted.deadline, services);
    this.keeper = AnswerKeeper.for(admitted, services.answerCache);
    if (admitted.serverTools !== undefined) {
      this.loop = new ToolLoop(admitted.serverTools, admitted.call.request, {
        maxRounds: admitted.maxToolRounds,
        requestId: admitted.requestId,
        maxNativeCallsPerRound: admitted.maxNativeCallsPerRound,
      });
      this.rounds = new ToolRounds(this.loop, admitted, this.billing, this.usage, this.control, signal);
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
    signal: ClientSignal,
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
      (await run.runAttempts()) ?? (run.rounds === undefined ? undefined : await run.foldRounds(run.rounds));
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
      const step = failover.next(this.log.count);
      if (step.kind === "end") return step;
      if (step.kind === "skip") {
        this.admitted.trace?.startAttempt(this.log.count);
        this.log.record(step.candidate, "circuit_open", performance.now());
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

  /** Non-streamed with server tools: the rounds after the serving one, folded into `result`. */
  private async foldRounds(rounds: ToolRounds): Promise<{ error: GatewayError } | undefined> {
    if (this.admitted.request.stream || this.result === undefined) return undefined;
    const folded = await rounds.foldNonStreamed(this.result);
    if ("error" in folded) return folded;
    this.result = folded.result;
    return undefined;
  }

  /**
   * A streamed attempt that was committed without its first part (the response started) failed
   * before producing any: nothing reached the client but keep-alives, so it is an ordinary failed
   * attempt and the run goes on with the next candidate. Returns the run's end, or undefined when
   * another attempt now serves.
   */
  private async failOverBeforeFirstPart(error: GatewayError): Promise<{ error: GatewayError } | undefined> {
    const candidate = this.log.abandonServing(error);
    this.stream.forget();
    return this.judgeFailure(candidate, error) ?? (await this.runAttempts());
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
    const traceHeaders = admitted.trace?.startAttempt(this.log.count);
    if (!adapter) {
      const error = new GatewayError(
        "internal_error",
        `No adapter for provider kind "${candidate.route.provider.kind}"`,
      );
      this.log.record(candidate, error.code, startedAt);
      return error;
    }
    admitted.adapter = adapter;
    // Admission built the call for the first candidate; any other attempt (a retry too: its
    // documents are read afresh) starts from the route's own call.
    if (this.log.count > 0 || candidate !== admitted.candidates[0]) {
      admitted.call = admitted.callFor(candidate);
    }
    // Later rounds of the serving attempt (server tools) keep its trace headers with the call.
    admitted.call.traceHeaders = traceHeaders;
    // The route's first request as it reads the documents: the files, or their text.
    const unread = await readRouteDocuments(admitted, adapter, candidate.model, control, this.usage);
    if (unread !== undefined) return control.stoppedWith ?? unread;
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
      this.log.record(candidate, refusal.code, startedAt, dropped);
      return refusal;
    }
    let error: GatewayError | undefined;
    control.callInFlight = true;
    try {
      if (!admitted.request.stream) {
        this.result = await adapter.generate(call);
        this.usage.observeResult(this.result);
      } else {
        error = await this.stream.open(adapter, call, this.timing.firstPartWaitMs);
      }
    } catch (thrown) {
      error = toGatewayError(thrown);
    }
    control.callInFlight = false;
    if (error !== undefined) {
      control.attemptController = undefined;
      attemptController.abort(error);
      this.log.record(candidate, control.cancelled ? "cancelled" : error.code, startedAt, dropped);
      return error;
    }
    // A streamed attempt that serves stays the one a stop or a cancel aborts; a non-streamed one is over.
    if (!admitted.request.stream) control.attemptController = undefined;
    this.failover.recordSuccess(candidate);
    this.usage.roundOpen = true;
    this.log.serve(candidate, startedAt, dropped, () => {
      if (control.attemptController === attemptController) control.attemptController = undefined;
      attemptController.abort(new GatewayError("provider_timeout", "Attempt abandoned"));
    });
    return undefined;
  }

  /** true when the first part has not arrived yet (the response starts without it). */
  get startedBeforeFirstPart(): boolean {
    return this.stream.slow;
  }

  /** The candidate that served (after `start` resolved). */
  get servedBy(): RouteCandidate | undefined {
    return this.log.servedBy;
  }

  /**
   * What the serving route's upstream went without (`tools[4](namespace)`, `thinking.display`), for
   * the response's `X-Hi-Dropped`; empty before one served or when nothing was lost.
   */
  get dropped(): readonly string[] {
    return this.log.dropped;
  }

  /** Every upstream call so far, in order (the record's `attempts`). */
  get attempts(): GenerationAttempt[] {
    return this.log.attempts;
  }

  /**
   * Streamed: the parts, in upstream order, ending after `finish` or an `error` part. However the
   * consumer stops (done, cancelled, or it threw and the loop returned early), the run settles.
   */
  async *parts(): AsyncGenerator<CanonicalStreamPart> {
    const { control, usage, stream } = this;
    let completed = false;
    try {
      let next = await this.stream.first();
      // Started without its first part, and it failed before any: fail over as before the start.
      while (stream.slow && (next === undefined || next.type === "error") && !control.cancelled) {
        if (control.stoppedWith) break;
        const failure = next === undefined ? createEmptyStreamError() : readStreamError(next.error);
        const end = await this.failOverBeforeFirstPart(failure);
        if (end) {
          next = control.cancelled ? undefined : toErrorPart(end.error);
          break;
        }
        next = await stream.first();
      }
      while (next !== undefined) {
        if (next.type === "error") this.error = readStreamError(next.error);
        else usage.observe(next);
        if (this.loop === undefined) {
          this.keeper?.keep(next);
          yield next;
        } else {
          for (const shown of this.loop.transform(next)) {
            this.keeper?.keep(shown);
            yield shown;
          }
        }
        if (next.type === "error" || control.cancelled) break;
        next = await stream.next();
        if (
          next === undefined &&
          this.rounds !== undefined &&
          usage.roundOpen &&
          usage.finishReason !== undefined
        ) {
          next = yield* stream.nextRound(this.rounds);
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
        stream.close();
      }
      void this.settle();
    }
  }

  /** The error the run ended with, once it failed. */
  get failure(): GatewayError | undefined {
    return this.error;
  }

  /** The client went away: stop the upstream and settle what was produced. Idempotent. */
  cancel(): void {
    if (this.control.cancelled || this.settlement) return;
    this.control.cancel();
    this.stream.close();
    // Between attempts or mid-stream: nothing more will be observed, so settle now. During an
    // attempt the attempt loop settles when the aborted call returns.
    if (this.log.isServing) void this.settle();
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

  private computeSettlement(): Promise<Settlement> {
    clearTimeout(this.deadlineTimer);
    this.signal.removeEventListener("abort", this.onClientGone);
    const { control } = this;
    const status: GenerationOutcome["status"] = control.cancelled ? "cancelled" : this.error ? "error" : "ok";
    this.log.close(status, this.error);
    return settleRun({
      admitted: this.admitted,
      billing: this.billing,
      status,
      error: this.error,
      promptProcessed: this.log.isServing || control.cancelledDuringCall,
      usage: this.usage,
      loop: this.rounds?.loop,
      laterRoundRequest: this.rounds?.laterRoundRequest,
      attempts: this.log.attempts,
      served: this.log.served,
      keeper: this.keeper,
      result: this.result,
    });
  }
}
