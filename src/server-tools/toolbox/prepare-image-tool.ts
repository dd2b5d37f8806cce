/**
 * The image tool for one request. The activation may fix the size of every image (`size`, as
 * OpenAI's hosted `image_generation` tool takes it); the model is then offered no size of its own.
 * Each call goes to the configured providers in order (server-tools/image), under the run's
 * signal and each provider's deadline. The model reads one or two sentences about what was made
 * (never the image); the client gets the image in its format's place. A generated image costs its
 * provider's price for its size, a failed call nothing.
 */
import type { FunctionTool, ServerToolActivation, ServerToolErrorCode } from "../../canonical/index.js";
import {
  describeImageOutcomeForModel,
  IMAGE_SIZES,
  IMAGE_TOOL_DEFINITION,
  type ImageFailure,
  type ImageGenerator,
  type ImageProviderSettings,
  type ImageSize,
  isImageProviderUsable,
  parseImageToolArguments,
  priceImage,
} from "../image/index.js";
import { createActivationError, type PreparedTool, readArgumentsObject } from "./prepared-tool.js";

/** The longest text the model reads back (a revised prompt can be long); it bounds the next round. */
const MAX_RESULT_CHARS = 1_000;

export interface ImageTool {
  generator: ImageGenerator;
  providers: readonly ImageProviderSettings[];
}

export function prepareImageTool(
  activation: ServerToolActivation,
  tool: ImageTool | undefined,
): PreparedTool {
  if (tool === undefined) {
    throw createActivationError(
      activation,
      "The image server tool is not configured on this gateway (server_tools.image.providers)",
    );
  }
  const { generator } = tool;
  if (!generator.configured) {
    const variables = tool.providers.map((provider) => provider.apiKeyEnv).filter(Boolean);
    throw createActivationError(
      activation,
      `The image server tool cannot generate images on this gateway: no image provider has its API key set (${variables.join(", ")})`,
    );
  }
  const size = readSizeOption(activation);
  const usable = tool.providers.filter(isImageProviderUsable);
  return {
    definition: size === undefined ? IMAGE_TOOL_DEFINITION : withoutSizeArgument(IMAGE_TOOL_DEFINITION),
    // A fixed size prices exactly; otherwise the dearest size of the dearest provider.
    maxCallCostMicroUsd:
      size === undefined
        ? generator.maxCostMicroUsd()
        : Math.max(0, ...usable.map((provider) => priceImage(provider, size))),
    maxResultTokens: MAX_RESULT_CHARS,
    readInput: readArgumentsObject,
    async execute(argumentsJson, signal) {
      const args = parseImageToolArguments(argumentsJson);
      if (!args.ok) {
        return {
          error: { code: "invalid_input", message: args.message },
          costMicroUsd: 0,
          forModel: args.message,
        };
      }
      const request = size === undefined ? args.request : { prompt: args.request.prompt, size };
      const outcome = await generator.generate(request, { signal });
      const forModel = cap(describeImageOutcomeForModel(outcome));
      if (!outcome.ok) {
        return {
          error: { code: classifyImageFailure(outcome.failure), message: forModel },
          costMicroUsd: 0,
          forModel,
        };
      }
      const { image } = outcome;
      return {
        output: {
          kind: "image",
          base64: image.base64,
          mediaType: image.mediaType,
          size: image.width && image.height ? `${image.width}x${image.height}` : image.requestedSize,
          ...(image.revisedPrompt === undefined ? {} : { revisedPrompt: image.revisedPrompt }),
          provider: image.providerId,
          model: image.model,
        },
        costMicroUsd: image.costMicroUsd,
        forModel,
      };
    },
  };
}

/** The activation's `size`: one of the tool's sizes, or `auto` (absent) to let the model choose. */
function readSizeOption(activation: ServerToolActivation): ImageSize | undefined {
  const size = activation.parameters?.size;
  if (size === undefined || size === null || size === "auto") return undefined;
  if (typeof size !== "string" || !(IMAGE_SIZES as readonly string[]).includes(size)) {
    throw createActivationError(
      activation,
      `image size must be one of ${IMAGE_SIZES.join(", ")} or auto; got ${JSON.stringify(size)}`,
      "size",
    );
  }
  return size as ImageSize;
}

function withoutSizeArgument(definition: FunctionTool): FunctionTool {
  const parameters = definition.parameters as { properties: Record<string, unknown> };
  const { size: _, ...properties } = parameters.properties;
  const trimmed = { ...definition.parameters };
  trimmed.properties = properties;
  const tool = { ...definition };
  tool.parameters = trimmed;
  return tool;
}

function classifyImageFailure(failure: ImageFailure): ServerToolErrorCode {
  switch (failure.reason) {
    // The model can change what it asked for: a refused or malformed prompt is its input.
    case "invalid_request":
    case "content_policy":
      return "invalid_input";
    case "http_error":
      return failure.status === 429 ? "too_many_requests" : "unavailable";
    default:
      return "unavailable";
  }
}

function cap(text: string): string {
  return text.length <= MAX_RESULT_CHARS ? text : `${text.slice(0, MAX_RESULT_CHARS - 1)}…`;
}
