/**
 * Accumulates streamed Chat tool-call deltas into canonical tool-input parts.
 *
 * Calls are keyed strictly by the delta's `index` (by `id` when a host omits `index`), never by
 * arrival order, so interleaved parallel calls stay apart. A call opens (`tool-input-start`) once
 * its name is known; fragments that arrive earlier are buffered and emitted at the start.
 * Arguments are concatenated byte-exact, with these normalisations for hosts that bend the format:
 * - `arguments: null` (or absent) adds nothing;
 * - arguments sent as a JSON object are serialised once;
 * - a delta re-sending the complete arguments after they already form valid JSON is ignored;
 * - a delta carrying the arguments so far plus more (cumulative hosts) contributes only the new tail;
 * - a name re-sent in later deltas is ignored (the name is fixed once the call has started);
 * - a call that never received arguments ends with `{}`.
 */
import type { CanonicalStreamPart } from "../../canonical/index.js";
import { createToolCallId } from "./read-message-fields.js";
import type { ChatToolCallWire } from "./wire-types.js";

interface PendingToolCall {
  position: number;
  upstreamId?: string;
  id?: string;
  name: string;
  /** The arguments so far: only its length is read per delta, the text itself at the end. */
  arguments: string;
  /** The pieces of `arguments` not emitted as tool-input-delta yet (a call waiting for its name). */
  unemitted: string[];
  started: boolean;
}

export interface ToolCallAccumulator {
  /** Folds one entry of `delta.tool_calls` in; returns the parts it produces. */
  accept(delta: ChatToolCallWire): CanonicalStreamPart[];
  /** Closes every call in the order they opened: tool-input-end then tool-call for each. */
  finish(): CanonicalStreamPart[];
  readonly count: number;
}

export function createToolCallAccumulator(): ToolCallAccumulator {
  const calls: PendingToolCall[] = [];
  const byIndex = new Map<number, PendingToolCall>();
  const byId = new Map<string, PendingToolCall>();

  function createCall(upstreamId: string | undefined): PendingToolCall {
    const call: PendingToolCall = {
      position: calls.length,
      name: "",
      arguments: "",
      unemitted: [],
      started: false,
    };
    if (upstreamId !== undefined) {
      call.upstreamId = upstreamId;
      byId.set(upstreamId, call);
    }
    calls.push(call);
    return call;
  }

  function findCall(delta: ChatToolCallWire): PendingToolCall {
    const upstreamId = typeof delta.id === "string" && delta.id !== "" ? delta.id : undefined;
    if (typeof delta.index === "number") {
      const existing = byIndex.get(delta.index);
      // A different id at a known index is a new call: some hosts number every call 0.
      const isNewCall =
        existing === undefined ||
        (upstreamId !== undefined && existing.upstreamId !== undefined && upstreamId !== existing.upstreamId);
      if (!isNewCall) return existing;
      const call = (upstreamId !== undefined ? byId.get(upstreamId) : undefined) ?? createCall(upstreamId);
      byIndex.set(delta.index, call);
      return call;
    }
    if (upstreamId !== undefined) return byId.get(upstreamId) ?? createCall(upstreamId);
    // Neither index nor id: a continuation of the latest call.
    return calls.at(-1) ?? createCall(undefined);
  }

  function start(call: PendingToolCall, parts: CanonicalStreamPart[]): void {
    call.started = true;
    call.id = call.upstreamId ?? createToolCallId();
    parts.push({ type: "tool-input-start", id: call.id, index: call.position, name: call.name });
  }

  function append(call: PendingToolCall, fragment: string): void {
    if (fragment === "") return;
    call.arguments += fragment;
    call.unemitted.push(fragment);
  }

  function flush(call: PendingToolCall, parts: CanonicalStreamPart[]): void {
    if (!call.started || call.unemitted.length === 0) return;
    const delta = call.unemitted.length === 1 ? call.unemitted[0] : call.unemitted.join("");
    call.unemitted = [];
    parts.push({ type: "tool-input-delta", id: call.id!, delta });
  }

  return {
    get count() {
      return calls.length;
    },
    accept(delta) {
      const parts: CanonicalStreamPart[] = [];
      const call = findCall(delta);
      if (call.upstreamId === undefined && typeof delta.id === "string" && delta.id !== "" && !call.started) {
        call.upstreamId = delta.id;
        byId.set(delta.id, call);
      }
      const name = delta.function?.name;
      if (!call.started && call.name === "" && typeof name === "string") call.name = name;
      append(call, readArgumentFragment(call.arguments, delta.function?.arguments));
      if (!call.started && call.name !== "") start(call, parts);
      flush(call, parts);
      return parts;
    },
    finish() {
      const parts: CanonicalStreamPart[] = [];
      for (const call of calls) {
        if (!call.started) start(call, parts);
        if (call.arguments === "") append(call, "{}");
        flush(call, parts);
        parts.push({ type: "tool-input-end", id: call.id! });
        parts.push({
          type: "tool-call",
          id: call.id!,
          index: call.position,
          name: call.name,
          arguments: call.arguments,
        });
      }
      return parts;
    },
  };
}

/** The text a delta's `arguments` adds to what has accumulated (see the module comment). */
export function readArgumentFragment(accumulated: string, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "string") {
    // An object: the whole arguments at once. After fragments it can only be a re-send.
    return accumulated === "" ? JSON.stringify(value) : "";
  }
  if (value === "" || accumulated === "") return value;
  // Cheap tests first: these run for every fragment of arguments that may be 100 KB long. A re-send
  // is about as long as what accumulated, and the (short) fragment is parsed before the (long)
  // accumulated text, so the parsing stays linear in the arguments' length: parsing the
  // accumulated text for every fragment like `{"` would be quadratic.
  const looksComplete = value.length >= 2 && value.length * 2 >= accumulated.length && /^\s*[[{]/.test(value);
  if (looksComplete && isCompleteJson(value) && isCompleteJson(accumulated)) return "";
  if (accumulated.length >= 2 && value.length > accumulated.length && value.startsWith(accumulated)) {
    return value.slice(accumulated.length);
  }
  return value;
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
