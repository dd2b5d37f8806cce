/** The `image` tool's public surface. */

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
} from "../../config/server-tools/image-config.js";
export { createImageGenerator, type ImageGenerator } from "../../providers/images/create-image-generator.js";
export type {
  GeneratedImage,
  ImageFailure,
  ImageFailureReason,
  ImageGenerationOutcome,
  ImageRequest,
} from "../../providers/images/image-generation.js";
export {
  describeImageOutcomeForModel,
  IMAGE_TOOL_DEFINITION,
  IMAGE_TOOL_NAME,
  type ImageToolArguments,
  parseImageToolArguments,
} from "./image-tool-definition.js";
