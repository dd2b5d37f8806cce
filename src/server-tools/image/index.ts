/** The `image` tool's public surface. */
export { createImageGenerator, type ImageGenerator } from "./create-image-generator.js";
export {
  DEFAULT_IMAGE_BASE_URLS,
  IMAGE_PROVIDER_KINDS,
  IMAGE_SIZES,
  IMAGE_TOOL_DEFAULTS,
  type ImageProviderKind,
  type ImageProviderSettings,
  type ImageSize,
  type ImageToolConfigFile,
  type ImageToolSettings,
  imageProviderConfigSchema,
  imageToolConfigSchema,
  isImageGenerationConfigured,
  isImageProviderUsable,
  priceImage,
  resolveImageToolSettings,
} from "./image-config.js";
export type {
  GeneratedImage,
  ImageFailure,
  ImageFailureReason,
  ImageGenerationOutcome,
  ImageRequest,
} from "./image-generation.js";
export {
  describeImageOutcomeForModel,
  IMAGE_TOOL_DEFINITION,
  IMAGE_TOOL_NAME,
  type ImageToolArguments,
  parseImageToolArguments,
} from "./image-tool-definition.js";
