/**
 * The drop report of a WebSocket turn. A socket message has no headers to carry `X-Hi-Dropped`, so
 * the same list goes on the response object of the turn's `response.created` and of its final event
 * (`response.completed`, `response.incomplete`, `response.failed`) as `hi_dropped`, the gateway's
 * extension field (unknown fields of a response object are ignored by the OpenAI SDKs and Codex).
 * Entries are as the generation record names them, not percent-encoded: JSON carries any text.
 */

/** The event types whose `response` gets `hi_dropped`. */
const RESPONSE_EVENTS: ReadonlySet<string> = new Set([
  "response.created",
  "response.completed",
  "response.incomplete",
  "response.failed",
]);

/** A decorator adding `hi_dropped` to those events; the identity when nothing was dropped. */
export function createDroppedDecorator(dropped: readonly string[]): (event: string) => string {
  if (dropped.length === 0) return (event) => event;
  return (event) => {
    // Only the few response-object events are parsed: the deltas pass untouched.
    const type = /^\{"type":"([^"]+)"/.exec(event)?.[1];
    if (type === undefined || !RESPONSE_EVENTS.has(type)) return event;
    const parsed = JSON.parse(event) as { response?: Record<string, unknown> };
    if (parsed.response === undefined) return event;
    parsed.response.hi_dropped = dropped;
    return JSON.stringify(parsed);
  };
}
