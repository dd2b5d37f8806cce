/**
 * OpenAI's parameter rules for reasoning models (o-series, gpt-5 family), shared by the
 * `openai-chat` dialect and the `openai-responses` adapter. Which models reason is catalog data
 * (feature `reasoning`), never a pattern on the model's name.
 *
 * Reasoning models answer 400 `unsupported_parameter` / `unsupported_value` for sampling
 * parameters other than their defaults (https://platform.openai.com/docs/guides/reasoning,
 * "limitations"; the recorded `reasoning-model-legacy-parameter-error.json`). Sending the default is
 * pointless, so the gateway leaves these fields out whatever their value, instead of failing the
 * caller's request. With reasoning effort `none` (gpt-5.1 and later) temperature, top_p and
 * logprobs are accepted again and are kept.
 */
import type { ReasoningEffort, SamplingOptions } from "../../canonical/index.js";
import type { CatalogModel } from "../../catalog/types.js";

type SamplingField = keyof SamplingOptions;

/** Fields a reasoning model rejects. */
const UNSUPPORTED_BY_REASONING_MODELS: readonly SamplingField[] = [
  "temperature",
  "topP",
  "frequencyPenalty",
  "presencePenalty",
  "logitBias",
  "logprobs",
  "topLogprobs",
];

/** Of those, the ones accepted again when reasoning is switched off with effort `none`. */
const ACCEPTED_AT_EFFORT_NONE: ReadonlySet<SamplingField> = new Set([
  "temperature",
  "topP",
  "logprobs",
  "topLogprobs",
]);

export function isReasoningModel(model: CatalogModel): boolean {
  return model.features.includes("reasoning");
}

/** The caller's sampling options without the fields the model would reject. */
export function selectSupportedSampling(
  sampling: SamplingOptions,
  model: CatalogModel,
  effort: ReasoningEffort | undefined,
): SamplingOptions {
  if (!isReasoningModel(model)) return sampling;
  const selected: SamplingOptions = { ...sampling };
  for (const field of UNSUPPORTED_BY_REASONING_MODELS) {
    if (effort === "none" && ACCEPTED_AT_EFFORT_NONE.has(field)) continue;
    delete selected[field];
  }
  return selected;
}
