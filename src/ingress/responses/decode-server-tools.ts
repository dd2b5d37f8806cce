/**
 * Server-tool activations from `tools` elements whose `type` is not `function`, in any
 * of the three accepted forms:
 *
 * - built-in: `{type: "web_search", max_uses, events}` (also `"<vendor>:web_search"`, as in chat);
 * - hosted: OpenAI's `{type: "web_search_preview", search_context_size, user_location, filters}` and
 *   `image_generation`, run by the gateway's own `web_search` and `image` tools;
 * - alternate: `{type, parameters, max_uses, events}`.
 *
 * Every field other than `type`, `max_uses`, `events` and `parameters` is a tool parameter, kept in
 * the wire form the client sent (snake_case keys). A tool listed more than once becomes one
 * activation, merged as in the chat format: the smallest explicit `max_uses` wins (default 1000),
 * `events` is on if any entry turns it on, later parameters override earlier ones.
 */
import type { ServerToolActivation, ServerToolId } from "../../canonical/index.js";
import {
  type ActivationSource,
  mergeServerToolActivations,
  SERVER_TOOL_IDS,
} from "../shared/server-tool-activations.js";
import { isServerTool, type ServerToolBody } from "./decode-tools.js";
import { HOSTED_SERVER_TOOL_IDS, type ResponsesToolBody } from "./request-schema.js";

const ACTIVATION_FIELDS = new Set(["type", "max_uses", "events", "parameters"]);

export function decodeServerTools(
  tools: readonly ResponsesToolBody[] | null | undefined,
): ServerToolActivation[] {
  const sources: ActivationSource[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (!isServerTool(tool)) continue;
    sources.push({
      id: resolveServerToolId(tool.type),
      maxUses: tool.max_uses ?? undefined,
      events: tool.events ?? undefined,
      parameters: collectParameters(tool),
      param: `tools[${index}]`,
    });
  }
  return mergeServerToolActivations(sources);
}

/** The schema admits only the types this resolves. */
function resolveServerToolId(type: string): ServerToolId {
  const bare = type.slice(type.indexOf(":") + 1);
  if ((SERVER_TOOL_IDS as readonly string[]).includes(bare)) return bare as ServerToolId;
  return HOSTED_SERVER_TOOL_IDS[type as keyof typeof HOSTED_SERVER_TOOL_IDS];
}

function collectParameters(tool: ServerToolBody): Record<string, unknown> | undefined {
  const parameters: Record<string, unknown> = { ...tool.parameters };
  for (const [key, value] of Object.entries(tool)) {
    if (!ACTIVATION_FIELDS.has(key) && value !== null && value !== undefined) parameters[key] = value;
  }
  return Object.keys(parameters).length > 0 ? parameters : undefined;
}
