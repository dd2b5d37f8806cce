/**
 * A cost quote: a generation request sent with `X-Hi-Dry-Run: 1` on any of the three generation
 * endpoints is admitted as far as its reservation and no further (limits/dry-run-guard.ts): the
 * same checks, the same worst case from the same code (engine admission, metering's input bound,
 * limits' worst-case cost), then an answer saying what it would reserve, what its prompt costs at
 * the bound, the price tier that applies, and whether each window's headroom and the balance
 * admit it. No upstream is called, nothing is reserved or recorded, no rate slot is taken
 * (docs/cost-quote.md).
 */
import { readKeySpend } from "../../admin/read-key-spend.js";
import type { AuthenticatedCaller } from "../../auth/authenticate.js";
import type { GatewayConfig } from "../../config/gateway-config.js";
import { resolveModel } from "../../engine/admit-request.js";
import type { GenerationEngine } from "../../engine/generation-engine.js";
import type { IngressFormat } from "../../ingress/ingress-format.js";
import type { RequestShapeLimits } from "../../ingress/shared/check-request-shape.js";
import type { DryRunGuard } from "../../limits/dry-run-guard.js";
import type { KeyLimitRepository, SpendWindowName } from "../../limits/ports.js";
import { MIN_LOWERED_OUTPUT_TOKENS, type SpendGuard } from "../../limits/spend-guard.js";
import { computeAffordableOutputCap } from "../../limits/worst-case-cost.js";
import { convertMicroUsdToUsd } from "../../metering/money.js";
import { selectPricesInForce } from "../../metering/prices.js";
import { decodeGeneration, type GenerationStartInput } from "./start-generation.js";

/** The request header that asks for a quote instead of a generation. */
export const DRY_RUN_HEADER = "x-hi-dry-run";

export interface CostQuoteDeps {
  config: GatewayConfig;
  engine: GenerationEngine;
  dryRuns: DryRunGuard;
  keyLimits: KeyLimitRepository;
  spendGuard: Pick<SpendGuard, "now" | "readReserved">;
  requestShape: RequestShapeLimits;
}

/** `1` or `true` asks for a quote; absent, `0` or `false` does not; anything else is refused. */
export function readDryRunHeader(value: string | null): boolean | "invalid" {
  if (value === null) return false;
  const text = value.trim().toLowerCase();
  if (text === "1" || text === "true") return true;
  if (text === "" || text === "0" || text === "false") return false;
  return "invalid";
}

interface WindowQuote {
  limit_micro_usd: string | null;
  /** limit − settled spend − reservations in flight; null: no limit. */
  remaining_micro_usd: string | null;
  admits: boolean;
}

export interface CostQuoteJson {
  object: "cost_quote";
  id: string;
  model: string;
  prompt_tokens_bound: number;
  output_cap: number;
  output_cap_adjustable: boolean;
  prompt_cost_usd: number;
  prompt_cost_micro_usd: string;
  reservation_usd: number;
  reservation_micro_usd: string;
  pricing_tier: { above_prompt_tokens: number } | null;
  admitted: boolean;
  output_cap_lowered_to: number | null;
  limits: Record<SpendWindowName, WindowQuote>;
  balance: { checked: boolean; available_micro_usd: string | null; admits: boolean };
}

const PICO_PER_MICRO = 1_000_000n;

export async function quoteGeneration(
  format: IngressFormat,
  deps: CostQuoteDeps,
  input: GenerationStartInput & { caller: AuthenticatedCaller },
): Promise<CostQuoteJson> {
  const generation = await decodeGeneration(format, deps, input);
  const admission = await deps.dryRuns.capture(input.requestId, () => deps.engine.admit(generation));
  const { worstCase } = admission;
  const amount = worstCase.amountMicroUsd;

  const spend = await readKeySpend(
    {
      store: { keyLimits: deps.keyLimits },
      spendGuard: deps.spendGuard,
      defaultRequestsPerMinute: deps.config.defaultRequestsPerMinute,
    },
    input.caller.key,
  );
  const headrooms: number[] = [];
  const describe = (name: SpendWindowName): WindowQuote => {
    const window = spend?.report.limits[name];
    const remaining = window?.remaining_micro_usd ?? null;
    if (remaining !== null) headrooms.push(Number(remaining));
    return {
      limit_micro_usd: window?.limit_micro_usd ?? null,
      remaining_micro_usd: remaining,
      admits: remaining === null || Number(remaining) >= amount,
    };
  };
  const limits = { daily: describe("daily"), monthly: describe("monthly"), total: describe("total") };
  let available: number | null = null;
  if (admission.checkBalance && spend) {
    const workspace = spend.report.workspace;
    available = Number(workspace.balance_micro_usd) - Number(workspace.reserved_micro_usd ?? 0);
    headrooms.push(available);
  }
  const balance = {
    checked: admission.checkBalance,
    available_micro_usd: available === null ? null : String(available),
    admits: available === null || available >= amount,
  };
  const fits = balance.admits && Object.values(limits).every((window) => window.admits);
  // As admission does: without a cap of the caller's, a shorter answer rather than a refusal.
  let lowered: number | null = null;
  if (!fits && admission.outputCapAdjustable) {
    const affordable = computeAffordableOutputCap(worstCase, Math.min(...headrooms));
    if (affordable >= Math.min(MIN_LOWERED_OUTPUT_TOKENS, worstCase.outputCap)) lowered = affordable;
  }

  const model = resolveModel(deps.config, generation.request.model);
  const prices = selectPricesInForce(model.prices, await deps.spendGuard.now());
  let tier: CostQuoteJson["pricing_tier"] = null;
  for (const candidate of prices.tiers ?? []) {
    if (worstCase.inputTokens > candidate.abovePromptTokens) {
      tier = { above_prompt_tokens: candidate.abovePromptTokens };
    }
  }
  const promptMicro = Number((worstCase.inputPicoUsd + PICO_PER_MICRO - 1n) / PICO_PER_MICRO);
  return {
    object: "cost_quote",
    id: input.requestId,
    model: model.slug,
    prompt_tokens_bound: worstCase.inputTokens,
    output_cap: worstCase.outputCap,
    output_cap_adjustable: admission.outputCapAdjustable,
    prompt_cost_usd: convertMicroUsdToUsd(promptMicro),
    prompt_cost_micro_usd: String(promptMicro),
    reservation_usd: convertMicroUsdToUsd(amount),
    reservation_micro_usd: String(amount),
    pricing_tier: tier,
    admitted: fits || lowered !== null,
    output_cap_lowered_to: lowered,
    limits,
    balance,
  };
}
