/**
 * Server-tool activations from their three sources: `tools` elements of type
 * `<vendor>:<tool>`, `plugins`, and `web_search_options` (which activates `web_search`).
 *
 * A tool activated more than once becomes one activation: the smallest explicit `max_uses` wins
 * (default 1000), `events` is on if any source turns it on, and parameters merge with later sources
 * overriding earlier ones (order: tools, plugins, web_search_options). Parameters stay in the wire
 * form the client sent (snake_case keys); they are the tool's own options, not gateway fields.
 */
import type { ServerToolActivation, ServerToolId } from "../../canonical/index.js";
import { type ActivationSource, mergeServerToolActivations } from "../shared/server-tool-activations.js";
import { isServerToolActivation } from "./decode-tools.js";
import type {
  ChatCompletionRequestBody,
  ChatPluginBody,
  ChatWebSearchOptionsBody,
} from "./request-schema.js";

type ServerToolFields = Pick<ChatCompletionRequestBody, "tools" | "plugins" | "web_search_options">;

export function decodeServerTools(request: ServerToolFields): ServerToolActivation[] {
  const sources: ActivationSource[] = [];
  for (const [index, tool] of (request.tools ?? []).entries()) {
    if (!isServerToolActivation(tool)) continue;
    // The schema guarantees `<vendor>:<tool>` with a known tool id after the colon.
    const id = tool.type.slice(tool.type.indexOf(":") + 1) as ServerToolId;
    sources.push({
      id,
      maxUses: tool.max_uses,
      events: tool.events,
      parameters: tool.parameters,
      param: `tools[${index}]`,
    });
  }
  for (const [index, plugin] of (request.plugins ?? []).entries())
    sources.push(decodePluginActivation(plugin, `plugins[${index}]`));
  if (request.web_search_options)
    sources.push(decodeWebSearchOptions(request.web_search_options, "web_search_options"));
  return mergeServerToolActivations(sources);
}

/** One `plugins` entry (shared with the messages format); `param` names where it stands. */
export function decodePluginActivation(plugin: ChatPluginBody, param: string): ActivationSource {
  const { id, events, max_uses: maxUses, ...extra } = plugin;
  return { id, maxUses, events, parameters: Object.keys(extra).length > 0 ? extra : undefined, param };
}

function decodeWebSearchOptions(options: ChatWebSearchOptionsBody, param: string): ActivationSource {
  const parameters: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options))
    if (value !== null && value !== undefined) parameters[key] = value;
  return { id: "web_search", parameters: Object.keys(parameters).length > 0 ? parameters : undefined, param };
}
