/**
 * What a run's upstream rounds reported and delivered, and their metering: the round being
 * received (its reported usage, finish, delivered output) and, with the server-tool loop, the
 * rounds already ended, each metered when it ended (the provider prices each call in its own
 * tier). The run (generation-run.ts) feeds it every part or result it observes.
 */
import {
  type CanonicalResult,
  type CanonicalStreamPart,
  type CanonicalUsage,
  createEmptyUsage,
  type FinishReason,
} from "../canonical/index.js";
import type { CanonicalRequest } from "../canonical/request.js";
import { estimateTextTokens } from "../metering/estimate-usage.js";
import type { GenerationBilling } from "./generation-billing.js";
import type { GenerationOutcome } from "./generation-record.js";
import { collectResultText, DeliveredOutput, type MeteredUsage } from "./meter-usage.js";

export class RunUsage {
  /** The round's last reported usage, its finish and the model the upstream named. */
  usage?: CanonicalUsage;
  finishReason?: FinishReason;
  upstreamModel?: string;
  /** Rounds already ended and metered (tool loop), summed; undefined before the first one ends. */
  completedUsage?: CanonicalUsage;
  /** Each metered round's own usage. */
  readonly completedRounds: CanonicalUsage[] = [];
  /** A round's upstream call was made and the round is not metered yet. */
  roundOpen = false;
  /** What reading the documents cost for the latest attempt's route (the serving one's, once one serves). */
  documentMicroUsd = 0;
  private completedEstimated = false;
  private output: DeliveredOutput;
  private estimateOutput: () => number;

  constructor(outputCap: number) {
    this.output = new DeliveredOutput(outputCap);
    this.estimateOutput = () => this.output.estimateTokens();
  }

  /** Some output of the open round reached the client. */
  get produced(): boolean {
    return this.output.produced;
  }

  /** One part of the round being received (`error` parts are the run's business). */
  observe(part: CanonicalStreamPart): void {
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
    }
  }

  /** A non-streamed round's whole result. */
  observeResult(result: CanonicalResult): void {
    this.usage = result.usage;
    this.finishReason = result.finishReason;
    this.upstreamModel = result.upstreamModel;
    this.estimateOutput = () => estimateTextTokens(collectResultText(result));
  }

  /**
   * The tool loop's round ended: it is metered now (`roundRequest`: its own request when it is not
   * the first round), and the next one starts from nothing (`outputCap`: the serving call's).
   */
  closeRound(
    billing: GenerationBilling,
    roundRequest: CanonicalRequest | undefined,
    outputCap: number,
  ): void {
    if (!this.roundOpen) return;
    const metered = this.meterOpenRound(billing, roundRequest);
    this.completedUsage = addUsage(this.completedUsage ?? createEmptyUsage(), metered.usage);
    this.completedRounds.push(metered.usage);
    this.completedEstimated ||= metered.estimated;
    this.roundOpen = false;
    this.usage = undefined;
    this.finishReason = undefined;
    this.output = new DeliveredOutput(outputCap);
    this.estimateOutput = () => this.output.estimateTokens();
  }

  /**
   * The run's usage as it ended: the upstream call's, or with the tool loop (`withLoop`) the
   * rounds already metered plus the one still open (it ended early: the client left, a deadline,
   * a failure).
   */
  meterRun(
    billing: GenerationBilling,
    status: GenerationOutcome["status"],
    roundRequest: CanonicalRequest | undefined,
    withLoop: boolean,
  ): MeteredUsage & { rounds: CanonicalUsage[] } {
    if (!withLoop) {
      const metered = this.meterOpenRound(billing, roundRequest);
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
      const open = this.meterOpenRound(billing, roundRequest);
      usage = addUsage(usage, open.usage);
      rounds.push(open.usage);
      estimated ||= open.estimated;
    }
    return { usage, estimated, capped: false, rounds };
  }

  private meterOpenRound(
    billing: GenerationBilling,
    roundRequest: CanonicalRequest | undefined,
  ): MeteredUsage {
    return billing.meter(
      {
        reported: this.usage,
        finished: this.finishReason !== undefined,
        estimateOutputTokens: this.estimateOutput,
      },
      roundRequest,
    );
  }
}

/** Usage of two rounds together. */
export function addUsage(a: CanonicalUsage, b: CanonicalUsage): CanonicalUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    cacheWrite1hTokens: a.cacheWrite1hTokens + b.cacheWrite1hTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}
