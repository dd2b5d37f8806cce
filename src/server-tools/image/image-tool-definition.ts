/**
 * The `image` tool as the model sees it inside the tool loop: its definition, the reading of the
 * model's arguments, and the short text result the model gets back. The image itself goes to the
 * client (in each format's own place), never into the model's context: a base64 PNG is hundreds
 * of thousands of tokens the model cannot use.
 */
import type { FunctionTool } from "../../canonical/request.js";
import { IMAGE_SIZES } from "../../config/server-tools/image-config.js";
import type { ImageGenerationOutcome, ImageRequest } from "../../providers/images/image-generation.js";

export const IMAGE_TOOL_NAME = "generate_image";

export const IMAGE_TOOL_DEFINITION: FunctionTool = {
  name: IMAGE_TOOL_NAME,
  description:
    "Generate an image from a text description. The image is shown to the user; you receive a short " +
    "confirmation, not the image. Call it once per image wanted, with a self-contained description " +
    "(subject, setting, style, composition, colours, any text to render).",
  parameters: {
    type: "object",
    properties: {
      prompt: {
        type: "string",
        description: "A detailed description of the image to generate.",
      },
      size: {
        type: "string",
        enum: [...IMAGE_SIZES],
        description: "1024x1024 (square, the default), 1536x1024 (landscape) or 1024x1536 (portrait).",
      },
    },
    required: ["prompt"],
    additionalProperties: false,
  },
};

export type ImageToolArguments = { ok: true; request: ImageRequest } | { ok: false; message: string };

/** Reads the JSON text of the model's call; a bad call becomes a message for the model to fix it. */
export function parseImageToolArguments(argumentsJson: string): ImageToolArguments {
  let value: unknown;
  try {
    value = JSON.parse(argumentsJson === "" ? "{}" : argumentsJson);
  } catch {
    return { ok: false, message: 'The arguments are not valid JSON; send {"prompt": "…"}.' };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, message: 'The arguments must be a JSON object such as {"prompt": "…"}.' };
  }
  const { prompt, size } = value as Record<string, unknown>;
  if (typeof prompt !== "string" || prompt.trim() === "") {
    return { ok: false, message: "prompt is required: a description of the image to generate." };
  }
  if (size !== undefined && size !== null && typeof size !== "string") {
    return { ok: false, message: `size must be one of ${IMAGE_SIZES.join(", ")}.` };
  }
  return { ok: true, request: { prompt, size: typeof size === "string" ? size : undefined } };
}

/** The tool result the model reads: what was made (or why not), in one or two sentences. */
export function describeImageOutcomeForModel(outcome: ImageGenerationOutcome): string {
  if (!outcome.ok) return `Image generation failed: ${outcome.failure.message}.`.replace(/\.\.$/, ".");
  const { image } = outcome;
  const format = image.mediaType.replace("image/", "").toUpperCase();
  const pixels = image.width && image.height ? `${image.width}x${image.height}` : image.requestedSize;
  const revised = image.revisedPrompt ? ` The provider used this prompt: ${image.revisedPrompt}` : "";
  return `Generated a ${pixels} ${format} image; it is shown to the user.${revised}`;
}
