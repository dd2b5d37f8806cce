/**
 * Canonical tool-call arguments (JSON text) → the `input` object of a `tool_use` block.
 *
 * The wire has only an object here (Anthropic's schema, and every client that reads `input.<arg>`).
 * Arguments that are not a JSON object — an upstream that produced invalid JSON, or a call cut off
 * by the token cap — become `{}`: the client then runs the tool without arguments and the tool's own
 * error tells the model what was missing, where a string or a half-parsed object would break
 * clients that validate the input (and the official SDK's parser throws on invalid JSON).
 */
export function parseToolInput(argumentsJson: string): Record<string, unknown> {
  return readJsonObject(argumentsJson) ?? {};
}

/** The arguments as an object, or undefined when they are not a JSON object. */
export function readJsonObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
