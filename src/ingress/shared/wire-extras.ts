/**
 * Leniency by rule, the part every format shares: tools of types the gateway has no vocabulary
 * for, and unknown fields of known tools, are accepted and carried as `WireExtra`s (an upstream of
 * the caller's own wire family gets them verbatim; elsewhere they are left out and reported), and
 * strict mode (`X-Hi-Strict: true` or `hi_strict: true`) refuses any such loss instead.
 */
import { z } from "zod";
import type { ExtraField, WireExtra, WireFamily } from "../../canonical/index.js";

/** The request header that turns strict mode on (`true`; any other value leaves it off). */
export const STRICT_HEADER = "x-hi-strict";

export const strictFieldSchema = z
  .boolean()
  .nullish()
  .meta({
    description:
      "strict mode: refuse the request (invalid_request naming the field) instead of sending it to a route " +
      "that would go without any part of it; also the header X-Hi-Strict: true",
  });

/** Whether the request asked for strict mode, by its body field or its header. */
export function readStrictMode(
  bodyValue: boolean | null | undefined,
  headerValue: string | null | undefined,
): boolean {
  return bodyValue === true || headerValue?.trim().toLowerCase() === "true";
}

/**
 * An object of a type the format's own schema does not know (a tool such as Codex's `namespace` or
 * Anthropic's `bash_20250124`; a `tool_choice` such as `allowed_tools`): any object with a string
 * `type` that `isKnownType` rejects. The check aborts, so a malformed object of a known type still
 * gets that type's own error. `what` names it in the schema's description ("tool", "tool_choice").
 */
export function createVerbatimSchema(
  id: string,
  isKnownType: (type: string) => boolean,
  family: string,
  what: "tool" | "tool_choice",
) {
  return z
    .object({
      type: z
        .string()
        .refine((type) => !isKnownType(type), { error: `is a known ${what} type`, abort: true }),
    })
    .loose()
    .meta({
      id,
      description: `a ${what} of another type: sent as it is to ${family} upstreams, left out elsewhere (reported in X-Hi-Dropped)`,
    });
}

/** The verbatim tool as a canonical extra: `tools[4](namespace)` in the drop report. */
export function createExtraTool(
  family: WireFamily,
  index: number,
  tool: Record<string, unknown> & { type: string },
): WireExtra & { tool: Record<string, unknown> } {
  return { family, param: `tools[${index}]`, kind: tool.type, tool };
}

/**
 * The fields of a known object that its schema does not list (Claude Code's `defer_loading` on a
 * tool), non-null, as one extra named after them: `tools[3].defer_loading`, or
 * `tools[3].{defer_loading,input_examples}` for several. Undefined when there are none.
 */
export function collectExtraFields(
  family: WireFamily,
  param: string,
  raw: Record<string, unknown>,
  known: ReadonlySet<string>,
): (WireExtra & { fields: Record<string, unknown> }) | undefined {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!known.has(key) && value !== null && value !== undefined) fields[key] = value;
  }
  const keys = Object.keys(fields);
  if (keys.length === 0) return undefined;
  const named = keys.length === 1 ? `${param}.${keys[0]}` : `${param}.{${keys.join(",")}}`;
  return { family, param: named, fields };
}

/**
 * A `tool_choice` of a form the gateway has no vocabulary for (Responses `allowed_tools`, `custom`,
 * `mcp`; Chat `custom`, `allowed_tools`; Messages `tool` naming a tool of another type): the whole
 * choice goes as it came to an upstream of `family`, which knows the tools it names; elsewhere the
 * route goes without it (the model chooses) and the drop report says `tool_choice(<type>)`.
 */
export function createExtraToolChoice(
  family: WireFamily,
  choice: Record<string, unknown> & { type: string },
): ExtraField {
  return { family, param: "tool_choice", kind: choice.type, path: ["tool_choice"], value: choice };
}
