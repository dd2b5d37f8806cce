/**
 * `X-Hi-Dropped`: what the serving route's upstream went without (the run's `dropped`), one entry
 * per loss, comma-separated: `tools[4](namespace), thinking.display`. Entries carry names the
 * caller chose (a passthrough field, a tool type), so each is cut to {@link MAX_ENTRY_CHARS} and
 * every character outside printable ASCII is percent-encoded: a header value can hold nothing else.
 */
export const DROPPED_HEADER = "X-Hi-Dropped";

const MAX_ENTRY_CHARS = 128;

/** The header to add to a response, or none when nothing was dropped. */
export function createDroppedHeader(dropped: readonly string[]): Record<string, string> {
  if (dropped.length === 0) return {};
  return { [DROPPED_HEADER]: dropped.map(formatEntry).join(", ") };
}

function formatEntry(entry: string): string {
  const cut = entry.length > MAX_ENTRY_CHARS ? `${entry.slice(0, MAX_ENTRY_CHARS)}…` : entry;
  // `,` would split an entry in two for a reader of the list.
  // A lone surrogate (the caller's own, or half of a pair the cut split) has no UTF-8 form to
  // encode: it becomes U+FFFD first.
  return cut.toWellFormed().replace(/[^\x20-\x2b\x2d-\x7e]/gu, (char) => encodeURIComponent(char));
}
