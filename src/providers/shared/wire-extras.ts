/**
 * The parts of a request the canonical form has no place for (`WireExtra`: Codex's `namespace`
 * tool, Claude Code's `tool_reference` blocks, `defer_loading`, `thinking.display`), as adapters
 * use them: an adapter of the same wire family writes them into its body verbatim, and every adapter
 * lists what its upstream goes without (`ProviderAdapter.listDropped`), for the drop report and
 * strict mode.
 */
import type { CanonicalRequest, ExtraField, LostPart, WireExtra, WireFamily } from "../../canonical/index.js";

/** How the drop report names one loss: `tools[4](namespace)`, `thinking.display`. */
export function describeExtra(extra: LostPart): string {
  return extra.kind === undefined ? extra.param : `${extra.param}(${extra.kind})`;
}

/**
 * Every extra of the request, in request order of the kinds: tools, tool fields, blocks (of turns
 * and of tool results, in turn order), fields.
 */
export function listExtras(request: CanonicalRequest): WireExtra[] {
  const extras: WireExtra[] = [...(request.extraTools ?? [])];
  for (const tool of request.tools) if (tool.extraFields !== undefined) extras.push(tool.extraFields);
  for (const message of request.messages) {
    if (message.role !== "tool") {
      if (message.extraBlocks !== undefined) extras.push(...message.extraBlocks);
      continue;
    }
    for (const part of message.content) extras.push(...(part.extraBlocks ?? []));
  }
  extras.push(...(request.extraFields ?? []));
  return extras;
}

/**
 * The extras an upstream of `family` cannot take (all of them for a family of none), and what the
 * engine left out of this route's request whatever its family (`leftOut`).
 */
export function listForeignExtras(request: CanonicalRequest, family: WireFamily | undefined): LostPart[] {
  return [...listExtras(request).filter((extra) => extra.family !== family), ...(request.leftOut ?? [])];
}

/** The verbatim tools for an upstream of `family`. */
export function extraToolsFor(request: CanonicalRequest, family: WireFamily): Record<string, unknown>[] {
  return (request.extraTools ?? []).filter((extra) => extra.family === family).map((extra) => extra.tool);
}

/** The request's nested fields for an upstream of `family`. */
export function extraFieldsFor(request: CanonicalRequest, family: WireFamily): ExtraField[] {
  return (request.extraFields ?? []).filter((field) => field.family === family);
}

/**
 * Sets each field in `body` where the object that holds it is there (`thinking.display` goes only
 * with a `thinking` the body sends); returns the fields that found no place.
 */
export function applyExtraFields(body: Record<string, unknown>, fields: readonly ExtraField[]): ExtraField[] {
  const unplaced: ExtraField[] = [];
  for (const field of fields) {
    const holder = findHolder(body, field.path);
    if (holder === undefined) unplaced.push(field);
    else holder[field.path.at(-1)!] = field.value;
  }
  return unplaced;
}

/** Whether `body` has the object that would hold a field at `path`. */
export function hasHolder(body: Record<string, unknown>, path: readonly string[]): boolean {
  return findHolder(body, path) !== undefined;
}

function findHolder(
  body: Record<string, unknown>,
  path: readonly string[],
): Record<string, unknown> | undefined {
  let holder: unknown = body;
  for (const key of path.slice(0, -1)) {
    holder = isRecord(holder) ? holder[key] : undefined;
  }
  return isRecord(holder) ? holder : undefined;
}

/** The passthrough fields an adapter leaves out, as the drop report names them. */
export function listDroppedPassthrough(
  request: CanonicalRequest,
  forwards: (key: string, value: unknown) => boolean,
): string[] {
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(request.passthrough)) {
    if (value === undefined || value === null || IGNORED_PASSTHROUGH.has(key)) continue;
    if (!forwards(key, value)) dropped.push(key);
  }
  return dropped;
}

/**
 * Passthrough fields whose purpose every route serves without them: `include` asks for encrypted
 * reasoning and search sources, which the gateway always returns in every format.
 */
const IGNORED_PASSTHROUGH: ReadonlySet<string> = new Set(["include"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
