/**
 * Configuration of the `image` server tool (`server_tools.image` in the YAML file): the providers
 * that generate images, in the order they are tried, each with its key's environment variable,
 * model, price and deadline. `resolveImageToolSettings` gives the runtime view with the keys read
 * from the environment passed in.
 */
import { z } from "zod";
import { usdPriceSchema } from "./usd-price-schema.js";

export const IMAGE_PROVIDER_KINDS = ["openai", "gemini"] as const;
export type ImageProviderKind = (typeof IMAGE_PROVIDER_KINDS)[number];

/** The sizes the tool offers the model: square, landscape, portrait. */
export const IMAGE_SIZES = ["1024x1024", "1536x1024", "1024x1536"] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];

export const DEFAULT_IMAGE_BASE_URLS: Record<ImageProviderKind, string> = {
  openai: "https://api.openai.com/v1",
  gemini: "https://generativelanguage.googleapis.com/v1beta",
};

export const IMAGE_TOOL_DEFAULTS = {
  timeoutMs: 120_000,
  defaultSize: "1024x1024",
  maxPromptChars: 4000,
} as const;

export const imageProviderConfigSchema = z
  .strictObject({
    /** Names the provider in usage records, events and logs. */
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _"),
    /** `openai`: the Images API (`POST {base_url}/images/generations`). `gemini`: `generateContent`. */
    kind: z.enum(IMAGE_PROVIDER_KINDS),
    /** Default: the provider's public API (`https://api.openai.com/v1`, `…googleapis.com/v1beta`). */
    base_url: z.url({ protocol: /^https?$/ }).optional(),
    /** Environment variable holding the API key; without it the provider is called unauthenticated. */
    api_key_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name")
      .optional(),
    /** e.g. `gpt-image-1`, `gemini-2.5-flash-image`. */
    model: z.string().min(1),
    /** Charged per generated image (USD); a failed generation costs nothing. */
    price_per_image_usd: usdPriceSchema,
    /** A different price for some sizes, e.g. `{"1536x1024": "0.063"}`. */
    price_per_image_usd_by_size: z.partialRecord(z.enum(IMAGE_SIZES), usdPriceSchema).optional(),
    /** Deadline of one generation (connect to last byte). */
    timeout_ms: z.int().min(1000).max(600_000).default(IMAGE_TOOL_DEFAULTS.timeoutMs),
    /** Size when the model names none. */
    default_size: z.enum(IMAGE_SIZES).default(IMAGE_TOOL_DEFAULTS.defaultSize),
    /** OpenAI only: `quality` sent with every request (the model's default when absent). */
    quality: z.enum(["low", "medium", "high", "auto"]).optional(),
    /** OpenAI only: `output_format` (PNG when absent). */
    output_format: z.enum(["png", "jpeg", "webp"]).optional(),
    /** Extra request headers (literal values; secrets belong in api_key_env). */
    headers: z.record(z.string(), z.string()).optional(),
  })
  .superRefine((provider, context) => {
    if (provider.kind === "openai") return;
    for (const field of ["quality", "output_format"] as const) {
      if (provider[field] !== undefined) {
        context.addIssue({ code: "custom", path: [field], message: `only for kind "openai"` });
      }
    }
  });

export const imageToolConfigSchema = z.strictObject({
  /** Tried in order: the next one when a provider is unreachable, overloaded or times out. */
  providers: z
    .array(imageProviderConfigSchema)
    .min(1, "at least one provider")
    .superRefine((providers, context) => {
      const seen = new Set<string>();
      providers.forEach((provider, index) => {
        if (seen.has(provider.id)) {
          context.addIssue({ code: "custom", path: [index, "id"], message: `duplicate id "${provider.id}"` });
        }
        seen.add(provider.id);
      });
    }),
  /** Longest prompt accepted from the model (characters). */
  max_prompt_chars: z.int().min(100).max(32_000).default(IMAGE_TOOL_DEFAULTS.maxPromptChars),
});

export type ImageToolConfigFile = z.infer<typeof imageToolConfigSchema>;

export interface ImageProviderSettings {
  id: string;
  kind: ImageProviderKind;
  /** Without trailing slash. */
  baseUrl: string;
  apiKeyEnv?: string;
  /** Read from `apiKeyEnv`; undefined when the variable is unset or empty. */
  apiKey?: string;
  model: string;
  pricePerImageMicroUsd: number;
  pricesBySizeMicroUsd: Partial<Record<ImageSize, number>>;
  timeoutMs: number;
  defaultSize: ImageSize;
  quality?: "low" | "medium" | "high" | "auto";
  outputFormat?: "png" | "jpeg" | "webp";
  headers: Record<string, string>;
}

export interface ImageToolSettings {
  providers: ImageProviderSettings[];
  maxPromptChars: number;
}

export function resolveImageToolSettings(
  file: ImageToolConfigFile,
  env: NodeJS.ProcessEnv,
): ImageToolSettings {
  return {
    maxPromptChars: file.max_prompt_chars,
    providers: file.providers.map((provider) => ({
      id: provider.id,
      kind: provider.kind,
      baseUrl: (provider.base_url ?? DEFAULT_IMAGE_BASE_URLS[provider.kind]).replace(/\/+$/, ""),
      apiKeyEnv: provider.api_key_env,
      apiKey: provider.api_key_env ? env[provider.api_key_env] || undefined : undefined,
      model: provider.model,
      pricePerImageMicroUsd: provider.price_per_image_usd,
      pricesBySizeMicroUsd: provider.price_per_image_usd_by_size ?? {},
      timeoutMs: provider.timeout_ms,
      defaultSize: provider.default_size,
      quality: provider.quality,
      outputFormat: provider.output_format,
      headers: provider.headers ?? {},
    })),
  };
}

/** A provider can be called: it needs no key, or its key is in the environment. */
export function isImageProviderUsable(provider: ImageProviderSettings): boolean {
  return provider.apiKeyEnv === undefined || provider.apiKey !== undefined;
}

/**
 * `meta.image_generation_configured`: true exactly when the `image` tool is configured and at
 * least one of its providers has its key in the environment.
 */
export function isImageGenerationConfigured(settings: ImageToolSettings | undefined): boolean {
  return settings?.providers.some(isImageProviderUsable) ?? false;
}

/** The price of one image of `size` from `provider`. */
export function priceImage(provider: ImageProviderSettings, size: ImageSize): number {
  return provider.pricesBySizeMicroUsd[size] ?? provider.pricePerImageMicroUsd;
}
