/**
 * What a generation is billed, from what the upstream reported and what reached the client. One
 * rule for every provider kind, streamed or not (docs/metering.md):
 *
 * - A generation the upstream finished is billed its reported usage. Usage that counts neither an
 *   input nor an output token is no report at all (no real request has a prompt of 0 tokens): such
 *   a generation, and one whose upstream reported nothing, is estimated instead.
 * - A generation that ended early (the client left, the upstream failed mid-stream, a deadline) is
 *   billed the input the upstream reported, else the admission's estimate of the prompt, and the
 *   larger of the output it reported so far and an estimate of the output delivered.
 * - Output is never billed past the output cap sent upstream: that is what the reservation held,
 *   so settled spend cannot run past a limit, whatever an upstream reports or sends.
 * - A record whose counts came (partly) from an estimate says so (`usage_estimated`).
 */
import type { CanonicalResult, CanonicalUsage } from "../canonical/index.js";
import { createEmptyUsage, TextPieces } from "../canonical/index.js";
import { estimateTextTokens } from "../metering/estimate-usage.js";

export interface MeteredUsage {
  usage: CanonicalUsage;
  /** Some of the counts are the gateway's estimate. */
  estimated: boolean;
  /** The upstream reported more output than the cap it was sent (billed at the cap). */
  capped: boolean;
}

export interface MeterInput {
  /** The last usage the upstream reported; partial when it did not finish. */
  reported: CanonicalUsage | undefined;
  /** The upstream finished (its last usage is final). */
  finished: boolean;
  /** Estimate of the prompt, media included; called only when it is needed (it tokenizes). */
  estimateInputTokens: () => number;
  /** Estimate of the output delivered; called only when it is needed (it tokenizes). */
  estimateOutputTokens: () => number;
  outputCap: number;
}

/** Usage that counts no token at all carries no information: upstreams that meter nothing send it. */
export function isUsageReported(usage: CanonicalUsage | undefined): usage is CanonicalUsage {
  return usage !== undefined && (usage.inputTokens > 0 || usage.outputTokens > 0);
}

export function meterUsage(input: MeterInput): MeteredUsage {
  const { reported, outputCap } = input;
  if (input.finished && isUsageReported(reported)) return capOutput(reported, outputCap, false);
  const inputReported = reported !== undefined && reported.inputTokens > 0;
  const reportedOutput = reported?.outputTokens ?? 0;
  const estimatedOutput = Math.min(outputCap, input.estimateOutputTokens());
  const base = inputReported ? reported : createEmptyUsage();
  const usage: CanonicalUsage = {
    inputTokens: inputReported ? reported.inputTokens : input.estimateInputTokens(),
    outputTokens: Math.max(reportedOutput, estimatedOutput),
    cachedInputTokens: base.cachedInputTokens,
    cacheWriteTokens: base.cacheWriteTokens,
    cacheWrite1hTokens: base.cacheWrite1hTokens,
    reasoningTokens: base.reasoningTokens,
  };
  return capOutput(usage, outputCap, !inputReported || estimatedOutput > reportedOutput);
}

/** The prompt was processed, nothing else is known: a request interrupted or left before its answer. */
export function meterPromptOnly(estimatedInputTokens: number): MeteredUsage {
  const usage = createEmptyUsage();
  usage.inputTokens = estimatedInputTokens;
  return {
    usage,
    estimated: true,
    capped: false,
  };
}

function capOutput(usage: CanonicalUsage, outputCap: number, estimated: boolean): MeteredUsage {
  if (usage.outputTokens <= outputCap) return { usage, estimated, capped: false };
  return {
    usage: {
      inputTokens: usage.inputTokens,
      outputTokens: outputCap,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      cacheWrite1hTokens: usage.cacheWrite1hTokens,
      reasoningTokens: Math.min(usage.reasoningTokens, outputCap),
    },
    estimated,
    capped: true,
  };
}

/** The text of a non-streamed answer, for an estimate of its output when no usage came with it. */
export function collectResultText(result: CanonicalResult): string {
  let text = "";
  for (const part of result.content) {
    if (part.type === "tool-call") text += `${part.name}${part.arguments}`;
    else if (part.type === "text" || part.type === "reasoning") text += part.text;
  }
  return text;
}

/**
 * A stream keeps the text it delivered for an estimate of its output, but never more than an
 * estimate can use: output is billed at most up to the cap, and o200k averages about 4 characters
 * per token on prose (fewer on code and non-Latin scripts), so 8 characters per token of the cap
 * reach the cap for any ordinary text. Beyond that only the fact that more was delivered is kept,
 * so a client that never reads cannot make a stream hold its upstream's whole output in memory.
 */
export const KEPT_CHARACTERS_PER_CAP_TOKEN = 8;

export class DeliveredOutput {
  private readonly kept = new TextPieces();
  private delivered = false;
  private readonly keep: number;

  constructor(outputCap: number) {
    this.keep = outputCap * KEPT_CHARACTERS_PER_CAP_TOKEN;
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.delivered = true;
    const room = this.keep - this.kept.length;
    if (room <= 0) return;
    this.kept.append(text.length <= room ? text : text.slice(0, room));
  }

  /** Anything at all reached the client (text, reasoning, a tool call). */
  get produced(): boolean {
    return this.delivered;
  }

  estimateTokens(): number {
    return estimateTextTokens(this.kept.text());
  }
}
