/**
 * A streamed generation in flight. Passes canonical parts through while keeping what settlement
 * needs: the usage the upstream reported so far, its finish reason, and (bounded) the delivered
 * output for an estimate when the stream ends before the final usage (meter-usage.ts).
 */
import type { CanonicalStreamPart, CanonicalUsage, FinishReason } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import type { Settlement } from "../canonical/settlement.js";
import { createGatewayErrorFromInfo, GatewayError, toGatewayError } from "../errors/gateway-error.js";
import { createDeadlineError } from "./create-deadline-error.js";
import type { AdmittedGeneration } from "./generation-engine.js";
import type { GenerationOutcome } from "./generation-record.js";
import { DeliveredOutput, type MeteredUsage, type MeterInput } from "./meter-usage.js";
import { createOutcome } from "./settle.js";

interface StreamHooks {
  settle(outcome: GenerationOutcome): Promise<void>;
  cost(usage: CanonicalUsage): number;
  meter(input: Pick<MeterInput, "reported" | "finished" | "estimateOutputTokens">): MeteredUsage;
}

export interface StreamTiming {
  /** How long the response waits for the upstream's first part before it starts without it. */
  firstPartWaitMs: number;
  /** When the generation must be over (performance.now() time): then it is stopped as timed out. */
  deadline: number;
}

export class GenerationStream {
  private usage?: CanonicalUsage;
  private finishReason?: FinishReason;
  private upstreamModel?: string;
  private error?: GatewayError;
  private readonly output: DeliveredOutput;
  private cancelled = false;
  /** Set by `stop`: the error the stream ends with once the upstream call is aborted. */
  private stoppedWith?: GatewayError;
  private deadlineTimer?: NodeJS.Timeout;
  private settlement?: Promise<Settlement>;
  private pendingFirst?: Promise<IteratorResult<CanonicalStreamPart>>;
  /** The response started before the upstream's first part arrived (see `open`). */
  private slowStart = false;

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly iterator: AsyncIterator<CanonicalStreamPart>,
    private readonly controller: AbortController,
    private readonly hooks: StreamHooks,
  ) {
    this.output = new DeliveredOutput(admitted.call.maxOutputTokens);
  }

  /**
   * Starts the upstream call and waits up to `firstPartWaitMs` for its first part. A failure in
   * that window is thrown, so the caller still answers with a plain HTTP error. A slow first part
   * (a reasoning model thinking quietly) does not hold the response back longer than that: the
   * stream starts, keep-alives flow, and a later failure becomes an in-band error frame.
   */
  static async open(
    admitted: AdmittedGeneration,
    signal: AbortSignal,
    hooks: StreamHooks,
    timing: StreamTiming,
  ): Promise<GenerationStream> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const iterator = admitted.adapter
      .stream({ ...admitted.call, signal: controller.signal })
      [Symbol.asyncIterator]();
    const stream = new GenerationStream(admitted, iterator, controller, hooks);
    stream.deadlineTimer = setTimeout(
      () => stream.stop(createDeadlineError(admitted.deadlineMs)),
      Math.max(0, timing.deadline - performance.now()),
    );
    stream.deadlineTimer.unref();
    const firstStep = iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      firstStep.then(
        (step) => ({ kind: "step" as const, step }),
        (error: unknown) => ({ kind: "thrown" as const, error }),
      ),
      new Promise<{ kind: "slow" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "slow" }), timing.firstPartWaitMs);
      }),
    ]);
    clearTimeout(timer);
    if (waited.kind === "slow") {
      stream.slowStart = true;
      stream.pendingFirst = firstStep;
      return stream;
    }
    const failure =
      stream.stoppedWith ??
      (waited.kind === "thrown"
        ? toGatewayError(waited.error)
        : waited.step.done
          ? new GatewayError("provider_unavailable", "Upstream stream ended without any output")
          : waited.step.value.type === "error"
            ? createGatewayErrorFromInfo(waited.step.value.error)
            : undefined);
    if (failure) {
      // A client that left while the first part was awaited cancelled; anything else failed.
      if (signal.aborted) stream.cancelled = true;
      else stream.error = failure;
      await stream.settle();
      throw failure;
    }
    stream.pendingFirst = firstStep;
    return stream;
  }

  /** true when the first part has not arrived yet (the response starts without it). */
  get startedBeforeFirstPart(): boolean {
    return this.slowStart;
  }

  /** The parts, in upstream order. Ends after `finish` or an `error` part. */
  async *parts(): AsyncGenerator<CanonicalStreamPart> {
    let next = await this.take(this.pendingFirst!);
    while (next !== undefined) {
      this.observe(next);
      yield next;
      if (next.type === "error" || this.cancelled) return;
      next = await this.take(this.iterator.next());
    }
    if (this.finishReason === undefined && !this.error && !this.cancelled) {
      const error = new GatewayError("provider_unavailable", "Upstream stream ended without a finish reason");
      this.error = error;
      yield toErrorPart(error);
    }
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

  get failure(): GatewayError | undefined {
    return this.error;
  }

  /** The client went away: stop the upstream and bill what was produced. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.controller.abort(new Error("client disconnected"));
    void this.iterator.return?.().catch(() => {});
  }

  /**
   * Ends the generation on the gateway's side (a deadline): the upstream call is aborted and the
   * parts end with `error` as their last part, which the client gets as the format's error event.
   * What was delivered is billed as for any stream that failed mid-way. No effect once it ended.
   */
  stop(error: GatewayError): void {
    if (this.cancelled || this.stoppedWith || this.settlement) return;
    this.stoppedWith = error;
    this.controller.abort(error);
  }

  /** Writes the outcome exactly once and returns what the encoder needs for its final frames. */
  settle(): Promise<Settlement> {
    this.settlement ??= this.computeSettlement();
    return this.settlement;
  }

  private async computeSettlement(): Promise<Settlement> {
    clearTimeout(this.deadlineTimer);
    const status: GenerationOutcome["status"] = this.cancelled ? "cancelled" : this.error ? "error" : "ok";
    // No charge for nothing: an upstream failure before any output costs 0.
    const metered =
      status === "error" && !this.output.produced
        ? undefined
        : this.hooks.meter({
            reported: this.usage,
            finished: this.finishReason !== undefined,
            estimateOutputTokens: () => this.output.estimateTokens(),
          });
    const usage = metered?.usage ?? createEmptyUsage();
    const costMicroUsd = metered ? this.hooks.cost(usage) : 0;
    const outcome = createOutcome(
      this.admitted,
      status,
      usage,
      costMicroUsd,
      this.finishReason ?? null,
      this.upstreamModel,
    );
    outcome.usageEstimated = metered?.estimated === true;
    if (this.error && status === "error") outcome.errorCode = this.error.code;
    await this.hooks.settle(outcome);
    return {
      usage,
      costMicroUsd,
      finishReason: this.finishReason ?? (this.error ? "error" : "stop"),
    };
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
}

function toErrorPart(error: GatewayError): CanonicalStreamPart {
  return { type: "error", error: { code: error.code, message: error.message } };
}
