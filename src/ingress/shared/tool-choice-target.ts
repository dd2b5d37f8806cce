/**
 * The refusal of a `tool_choice` that names a function the request's function tools lack. When a
 * tool of another type carries that name (a function tool whose `type` was mistyped, say), the
 * error names that tool's `type`: that is the field to fix, not the choice.
 */
import { GatewayError } from "../../errors/gateway-error.js";

export function missingToolChoiceTarget(
  name: string,
  rawTools: readonly unknown[] | null | undefined,
  nameOf: (tool: Record<string, unknown>) => unknown,
  choice: { message: string; param: string },
): GatewayError {
  for (const [index, tool] of (rawTools ?? []).entries()) {
    if (typeof tool !== "object" || tool === null) continue;
    const record = tool as Record<string, unknown>;
    if (nameOf(record) !== name) continue;
    return GatewayError.invalidRequest(
      `${choice.param} names "${name}", but tools[${index}] has type ${JSON.stringify(record.type)}, which is not a function tool's`,
      `tools[${index}].type`,
    );
  }
  return GatewayError.invalidRequest(choice.message, choice.param);
}
