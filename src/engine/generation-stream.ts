/**
 * A streamed generation in flight. Passes canonical parts through while keeping what settlement
 * needs: the upstream's usage and finish reason, and the delivered text for an estimate when the
 * client leaves (or the stream breaks) before the usage arrives.
 */
import type { CanonicalStreamPart, CanonicalUsage, FinishReason } from "../canonical/index.js";
import { createGatewayErrorFromInfo, GatewayError, toGatewayError } from "../errors/gateway-error.js";
import type { Settlement } from "../ingress/ingress-format.js";
import { estimateUsage } from "../metering/estimate-usage.js";
import type { GenerationOutcome } from "../storage/types.js";
import type { AdmittedGeneration } from "./generation-engine.js";
import { createOutcome } from "./settle.js";

interface StreamHooks {
  settle(outcome: GenerationOutcome): Promise<void>;
  cost(usage: CanonicalUsage): number;
}

export class GenerationStream {
  private usage?: CanonicalUsage;
  private finishReason?: FinishReason;
  private upstreamModel?: string;
  private error?: GatewayError;
  private deliveredText = "";
  private cancelled = false;
  private settlement?: Promise<Settlement>;
  private pendingFirst?: Promise<IteratorResult<CanonicalStreamPart>>;
  /** The response started before the upstream's first part arrived (see `open`). */
  private slowStart = false;

  private constructor(
    private readonly admitted: AdmittedGeneration,
    private readonly iterator: AsyncIterator<CanonicalStreamPart>,
    private readonly controller: AbortController,
    private readonly hooks: StreamHooks,
  ) {}

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
    firstPartWaitMs: number,
  ): Promise<GenerationStream> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const iterator = admitted.adapter
      .stream({ ...admitted.call, signal: controller.signal })
      [Symbol.asyncIterator]();
    const firstStep = iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      firstStep.then(
        (step) => ({ kind: "step" as const, step }),
        (error: unknown) => ({ kind: "thrown" as const, error }),
      ),
      new Promise<{ kind: "slow" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "slow" }), firstPartWaitMs);
      }),
    ]);
    clearTimeout(timer);
    const stream = new GenerationStream(admitted, iterator, controller, hooks);
    if (waited.kind === "slow") {
      stream.slowStart = true;
      stream.pendingFirst = firstStep;
      return stream;
    }
    const failure =
      waited.kind === "thrown"
        ? toGatewayError(waited.error)
        : waited.step.done
          ? new GatewayError("provider_unavailable", "Upstream stream ended without any output")
          : waited.step.value.type === "error"
            ? createGatewayErrorFromInfo(waited.step.value.error)
            : undefined;
    if (failure) {
      stream.error = failure;
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
    let next: CanonicalStreamPart | undefined;
    try {
      const first = await this.pendingFirst!;
      next = first.done ? undefined : first.value;
    } catch (thrown) {
      if (this.cancelled) return;
      const error = toGatewayError(thrown);
      next = { type: "error", error: { code: error.code, message: error.message } };
    }
    while (next !== undefined) {
      this.observe(next);
      yield next;
      if (next.type === "error" || this.cancelled) return;
      let step: IteratorResult<CanonicalStreamPart>;
      try {
        step = await this.iterator.next();
      } catch (thrown) {
        if (this.cancelled) return;
        const error = toGatewayError(thrown);
        next = { type: "error", error: { code: error.code, message: error.message } };
        continue;
      }
      next = step.done ? undefined : step.value;
    }
    if (this.finishReason === undefined && !this.error && !this.cancelled) {
      const error = new GatewayError("provider_unavailable", "Upstream stream ended without a finish reason");
      this.error = error;
      yield { type: "error", error: { code: error.code, message: error.message } };
    }
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

  /** Writes the outcome exactly once and returns what the encoder needs for its final frames. */
  settle(): Promise<Settlement> {
    this.settlement ??= this.computeSettlement();
    return this.settlement;
  }

  private async computeSettlement(): Promise<Settlement> {
    const produced = this.deliveredText.length > 0;
    let usage = this.usage;
    if (!usage) {
      usage =
        produced || this.cancelled ? estimateUsage(this.admitted.request, this.deliveredText) : undefined;
    }
    // No charge for nothing: a failure before any output costs 0.
    const billable = usage !== undefined && (produced || this.error === undefined);
    const finalUsage = usage ?? estimateUsage(this.admitted.request, "");
    const costMicroUsd = billable ? this.hooks.cost(finalUsage) : 0;
    const status: GenerationOutcome["status"] = this.cancelled ? "cancelled" : this.error ? "error" : "ok";
    const outcome = createOutcome(
      this.admitted,
      status,
      billable ? finalUsage : { ...finalUsage, inputTokens: 0, outputTokens: 0 },
      costMicroUsd,
      this.finishReason ?? null,
      this.upstreamModel,
    );
    if (this.error) outcome.errorCode = this.error.code;
    await this.hooks.settle(outcome);
    return {
      usage: finalUsage,
      costMicroUsd,
      finishReason: this.finishReason ?? (this.error ? "error" : "stop"),
    };
  }

  private observe(part: CanonicalStreamPart): void {
    switch (part.type) {
      case "text-delta":
      case "reasoning-delta":
      case "tool-input-delta":
        this.deliveredText += part.delta;
        break;
      case "tool-call":
        this.deliveredText += part.name;
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
