/**
 * The most a request can cost, reserved at admission: the most input tokens its upstream can bill
 * for it (metering/bound-input-tokens.ts, with the adapter's rules, capped by the model's context
 * length) at the dearest input rate it can be billed at, plus the output cap at the completion
 * rate (reasoning tokens are output), both taken from the dearest price tier a prompt of that many
 * tokens can fall in (metering/prices.ts). Integer pico-USD in BigInt, rounded up to micro-USD like
 * the bill itself. Both sides are upper bounds, so settled spend stays within what was reserved
 * (docs/limits.md).
 */
import type { CanonicalRequest } from "../canonical/index.js";
import { boundInputTokens, type UpstreamInputRules } from "../metering/bound-input-tokens.js";
import { type ModelPrices, selectReachablePrices, type TokenPrices } from "../metering/prices.js";

const PICO_PER_MICRO = 1_000_000n;

/** Where the request goes: what that upstream bills for input, and how much it accepts. */
export interface InputBounds {
  rules: UpstreamInputRules;
  contextLength: number;
  /** Tokens the upstream gets beyond what the request shows (text the gateway puts in its place). */
  extraTokens?: number;
}

export interface WorstCase {
  inputTokens: number;
  /** Cost of the estimated input, pico-USD. */
  inputPicoUsd: bigint;
  /** Price of one input token at the rate the input is reserved at, pico-USD. */
  inputTokenPicoUsd: bigint;
  /** Price of one output token, pico-USD. */
  outputTokenPicoUsd: bigint;
  outputCap: number;
  /** Input plus the whole output cap, micro-USD (rounded up). */
  amountMicroUsd: number;
}

export function estimateWorstCase(
  request: CanonicalRequest,
  prices: ModelPrices,
  outputCap: number,
  bounds: InputBounds,
): WorstCase {
  const inputTokens = Math.min(
    boundInputTokens(request, bounds.rules, bounds.contextLength) + (bounds.extraTokens ?? 0),
    bounds.contextLength,
  );
  const reachable = selectReachablePrices(prices, inputTokens);
  const inputTokenPicoUsd = selectInputPrice(request, reachable);
  const worst = {
    inputTokens,
    inputPicoUsd: BigInt(inputTokens) * inputTokenPicoUsd,
    inputTokenPicoUsd,
    outputTokenPicoUsd: reachable.completionPicoUsd,
    outputCap,
    amountMicroUsd: 0,
  };
  worst.amountMicroUsd = computeReservation(worst, outputCap);
  return worst;
}

/**
 * `worst` with a cost that does not depend on tokens (reading a request's PDFs) added to its input,
 * so the reservation and the affordable output cap both count it.
 */
export function addFixedCost(worst: WorstCase, microUsd: number): WorstCase {
  if (microUsd <= 0) return worst;
  const added: WorstCase = {
    inputTokens: worst.inputTokens,
    inputPicoUsd: worst.inputPicoUsd + BigInt(microUsd) * PICO_PER_MICRO,
    inputTokenPicoUsd: worst.inputTokenPicoUsd,
    outputTokenPicoUsd: worst.outputTokenPicoUsd,
    outputCap: worst.outputCap,
    amountMicroUsd: worst.amountMicroUsd,
  };
  added.amountMicroUsd = computeReservation(added, added.outputCap);
  return added;
}

/** What reserving `outputCap` output tokens costs, micro-USD. */
export function computeReservation(worst: WorstCase, outputCap: number): number {
  const pico = worst.inputPicoUsd + BigInt(outputCap) * worst.outputTokenPicoUsd;
  return Number((pico + PICO_PER_MICRO - 1n) / PICO_PER_MICRO);
}

/**
 * The largest output cap whose reservation fits in `headroomMicroUsd` (0 when not even the input
 * fits). With free output, any cap fits once the input does.
 */
export function computeAffordableOutputCap(worst: WorstCase, headroomMicroUsd: number): number {
  const budget = BigInt(Math.max(0, headroomMicroUsd)) * PICO_PER_MICRO - worst.inputPicoUsd;
  if (budget < 0n) return 0;
  if (worst.outputTokenPicoUsd === 0n) return worst.outputCap;
  const tokens = budget / worst.outputTokenPicoUsd;
  return tokens > BigInt(worst.outputCap) ? worst.outputCap : Number(tokens);
}

/**
 * Prompt tokens are billed at the prompt rate, except cache writes, which can cost more (Anthropic:
 * 1.25× for 5 minutes, 2× for an hour; OpenAI: 1.25× for 30 minutes, 2.5× for 12 hours). A request
 * that asks for caching, or for a longer retention, may write all of its input at that price.
 */
function selectInputPrice(request: CanonicalRequest, prices: TokenPrices): bigint {
  const ttls = collectCacheTtls(request);
  let price = prices.promptPicoUsd;
  const extended = ttls.has("1h") || asksExtendedRetention(request);
  if ((ttls.size > 0 || extended) && prices.cacheWritePicoUsd > price) price = prices.cacheWritePicoUsd;
  if (extended && prices.cacheWrite1hPicoUsd > price) {
    price = prices.cacheWrite1hPicoUsd;
  }
  return price;
}

/**
 * OpenAI's `prompt_cache_retention`, passed through from a Chat Completions or Responses request:
 * any value but the in-memory default asks for the longer (dearer) retention.
 */
function asksExtendedRetention(request: CanonicalRequest): boolean {
  const retention = request.passthrough.prompt_cache_retention;
  return typeof retention === "string" && !/^(in[-_]memory|default|30m)$/i.test(retention);
}

function collectCacheTtls(request: CanonicalRequest): Set<string> {
  const ttls = new Set<string>();
  const note = (part: object) => {
    const cacheControl = (part as { cacheControl?: { ttl?: string } }).cacheControl;
    if (cacheControl) ttls.add(cacheControl.ttl ?? "5m");
  };
  for (const part of request.system) note(part);
  for (const tool of request.tools) note(tool);
  for (const message of request.messages) for (const part of message.content) note(part);
  return ttls;
}
