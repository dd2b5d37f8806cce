/**
 * Server-tool activations shared by every ingress format. A tool activated more than once (by
 * `tools`, `plugins`, `web_search_options`, hosted-tool forms…) becomes one activation: the
 * smallest explicit `max_uses` wins (default 1000), `events` is on if any source turns
 * it on, later parameters override earlier ones.
 */
import type { ServerToolActivation, ServerToolId } from "../../canonical/index.js";

export const SERVER_TOOL_IDS = ["web_search", "web_fetch", "pdf", "datetime", "image"] as const;

/** `max_uses` when no source sets it. */
export const DEFAULT_SERVER_TOOL_MAX_USES = 1000;

export interface ActivationSource {
  id: ServerToolId;
  maxUses?: number;
  events?: boolean;
  parameters?: Record<string, unknown>;
  /** The request field it came from (`plugins[0]`); the activation keeps its first source's. */
  param?: string;
}

export function mergeServerToolActivations(sources: readonly ActivationSource[]): ServerToolActivation[] {
  const merged = new Map<ServerToolId, { explicitMaxUses?: number; activation: ServerToolActivation }>();
  for (const source of sources) {
    let entry = merged.get(source.id);
    if (entry === undefined) {
      entry = { activation: { id: source.id, maxUses: DEFAULT_SERVER_TOOL_MAX_USES, events: false } };
      if (source.param !== undefined) entry.activation.param = source.param;
      merged.set(source.id, entry);
    }
    if (source.maxUses !== undefined) {
      entry.explicitMaxUses = Math.min(entry.explicitMaxUses ?? source.maxUses, source.maxUses);
      entry.activation.maxUses = entry.explicitMaxUses;
    }
    if (source.events === true) entry.activation.events = true;
    if (source.parameters !== undefined) {
      // Later keys win. Defined, never assigned: a caller's `__proto__` key stays a plain key.
      entry.activation.parameters = Object.fromEntries([
        ...Object.entries(entry.activation.parameters ?? {}),
        ...Object.entries(source.parameters),
      ]);
    }
  }
  // Optional when only the client's tool list activated it; `plugins` (or a source of unknown
  // origin) makes it a request the caller made of this gateway.
  for (const source of sources) {
    const activation = merged.get(source.id)!.activation;
    const fromToolList = source.param !== undefined && !source.param.startsWith("plugins");
    if (!fromToolList) activation.optional = false;
    else if (activation.optional === undefined) activation.optional = true;
  }
  return [...merged.values()].map((entry) => {
    const activation = entry.activation;
    if (activation.optional !== true) delete activation.optional;
    return activation;
  });
}
