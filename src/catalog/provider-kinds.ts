/** The provider kinds and model features a catalog entry may name. */
export const PROVIDER_KINDS = [
  "openai-compatible",
  "openai-chat",
  "openai-responses",
  "anthropic",
  "google",
] as const;

/** Answers made in the gateway, for trying it without a provider account (config/demo.yaml). */
export const DEMO_PROVIDER_KIND = "demo";

export const MODEL_FEATURES = [
  "tools",
  "vision",
  "json_mode",
  "reasoning",
  "streaming",
  "prompt_caching",
] as const;
