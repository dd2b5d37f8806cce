/**
 * A generated image (the `image` server tool's output) → an entry of the assistant message's
 * `images` list, the form OpenRouter's clients read: `{type: "image_url", image_url: {url}}` with
 * the image as a data URL, since the gateway keeps no files to link to. OpenAI's Chat Completions
 * has no image output, so this is the one place the format can carry it.
 */
import type { ServerToolResult } from "../../canonical/index.js";

export interface ChatImage {
  type: "image_url";
  image_url: { url: string };
}

/** The image a result carries, or undefined for any other result (and a failed generation). */
export function encodeChatImage(result: ServerToolResult): ChatImage | undefined {
  const output = result.output;
  if (result.status !== "completed" || output?.kind !== "image") return undefined;
  return { type: "image_url", image_url: { url: `data:${output.mediaType};base64,${output.base64}` } };
}
