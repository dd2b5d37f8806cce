/**
 * The rounds a run adds after its serving attempt when the request activated server tools
 * (tool-loop.ts): the round that ended is metered, the reservation is extended before the next
 * one (generation-billing.ts), and the next round's request goes to the serving route. Streamed,
 * the run opens each next round's stream itself (generation-run.ts); non-streamed, the rounds are
 * called here and their parts fold into the one result the answer renders.
 */
import type { CanonicalResult, CanonicalStreamPart } from "../canonical/index.js";
import { createEmptyUsage } from "../canonical/index.js";
import type { CanonicalRequest } from "../canonical/request.js";
import { type GatewayError, toGatewayError } from "../errors/gateway-error.js";
import { convertResultToParts } from "../providers/shared/convert-result-to-parts.js";
import { foldStreamParts } from "../providers/shared/fold-stream-parts.js";
import type { AdmittedGeneration } from "./admitted-generation.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { ClientSignal } from "./ports.js";
import type { RunControl } from "./run-control.js";
import type { RunUsage } from "./run-usage.js";
import { toUpstreamCall } from "./to-upstream-call.js";
import type { ReserveRound, ToolLoop } from "./tool-loop.js";

export class ToolRounds {
  constructor(
    readonly loop: ToolLoop,
    private readonly admitted: AdmittedGeneration,
    private readonly billing: GenerationBilling,
    private readonly usage: RunUsage,
    private readonly control: RunControl,
    /** The client's signal: its reason is the error of a run the client left. */
    private readonly clientSignal: ClientSignal,
  ) {}

  /** The request of the current round when it is not the first one's (its prompt is estimated from it). */
  get laterRoundRequest(): CanonicalRequest | undefined {
    return this.loop.round === 1 ? undefined : this.loop.roundRequest;
  }

  /**
   * A round has ended: it is metered, its server calls run (their results are yielded), and either
   * the next round's request is returned or the run's summed usage and its finish are yielded and
   * undefined is returned.
   */
  async *finishRound(): AsyncGenerator<CanonicalStreamPart, CanonicalRequest | undefined> {
    const { usage, loop } = this;
    usage.closeRound(this.billing, this.laterRoundRequest, this.admitted.call.maxOutputTokens);
    const decision = yield* loop.finishRound(this.reserveRound, this.control.signal);
    if (decision.kind === "next") return decision.request;
    usage.finishReason = decision.finish.reason;
    yield { type: "usage", usage: usage.completedUsage ?? createEmptyUsage() };
    yield decision.finish;
    return undefined;
  }

  /**
   * Non-streamed: `first` (the serving attempt's result) is the first round; each round's result
   * goes through the tool loop as parts, further rounds are called on the serving route. The
   * folded result, or the error the run ends with.
   */
  async foldNonStreamed(
    first: CanonicalResult,
  ): Promise<{ result: CanonicalResult } | { error: GatewayError }> {
    const { loop, control, usage, admitted } = this;
    usage.roundOpen = true;
    const shown: CanonicalStreamPart[] = [];
    let result = first;
    for (;;) {
      for (const part of convertResultToParts(result)) shown.push(...loop.transform(part));
      const steps = this.finishRound();
      let step = await steps.next();
      while (!step.done) {
        shown.push(step.value);
        step = await steps.next();
      }
      const request = step.value;
      if (request === undefined) break;
      if (control.interrupted)
        return { error: control.stoppedWith ?? toGatewayError(this.clientSignal.reason) };
      usage.roundOpen = true;
      control.callInFlight = true;
      try {
        result = await admitted.adapter.generate(toUpstreamCall(admitted.call, request, control.signal));
      } catch (thrown) {
        control.callInFlight = false;
        if (control.cancelled) return { error: toGatewayError(this.clientSignal.reason) };
        return { error: control.stoppedWith ?? toGatewayError(thrown) };
      }
      control.callInFlight = false;
      usage.observeResult(result);
    }
    return { result: foldStreamParts(shown) };
  }

  /** The tool loop's reservation step, with what the run has spent so far. */
  private readonly reserveRound: ReserveRound = (toolsMicroUsd, next) =>
    this.billing.reserveRound(
      this.usage.completedRounds,
      this.loop.toolCostMicroUsd + this.usage.documentMicroUsd,
      toolsMicroUsd,
      next,
    );
}
