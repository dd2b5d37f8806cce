import { z } from "zod";

/** Most alternatives one request may name: each is a route list the run may try. */
export const MAX_FALLBACK_MODELS = 8;

/**
 * `models: [...]` beside `model` (as OpenRouter's clients send it), in every ingress format: catalog
 * slugs tried in order when the requested model's routes fail before any output. Every one must
 * exist and be allowed for the key, else the request is refused before anything is sent.
 */
export const fallbackModelsSchema = z
  .array(z.string().min(1))
  .min(1)
  .max(MAX_FALLBACK_MODELS)
  .nullish()
  .describe("alternative model slugs, tried in order when `model` fails before any output");
