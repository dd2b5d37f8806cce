/**
 * The headroom headers (docs/limits.md, "Headroom headers"): on every generation answer of a key
 * with a spend limit, what each of its limits, and the workspace's balance unless it is invoiced,
 * leaves once the request's own reservation is held. Read in the admission's own step (no extra
 * round trip), so each is a lower bound of what remains: this request's worst case is counted in
 * full, and so are the reservations of every request still in flight.
 */
import type { Headroom } from "../../limits/limit-counters.js";

export const HEADROOM_HEADERS = {
  daily: "X-Hi-Limit-Remaining-Daily-Micro-Usd",
  monthly: "X-Hi-Limit-Remaining-Monthly-Micro-Usd",
  total: "X-Hi-Limit-Remaining-Total-Micro-Usd",
  balance: "X-Hi-Balance-Remaining-Micro-Usd",
} as const;

/** Adds the headers to `headers` (and returns it); none for a key without a spend limit. */
export function addHeadroomHeaders(
  headers: Record<string, string>,
  headroom: Headroom | undefined,
): Record<string, string> {
  if (headroom === undefined) return headers;
  if (headroom.daily !== undefined) headers[HEADROOM_HEADERS.daily] = String(headroom.daily);
  if (headroom.monthly !== undefined) headers[HEADROOM_HEADERS.monthly] = String(headroom.monthly);
  if (headroom.total !== undefined) headers[HEADROOM_HEADERS.total] = String(headroom.total);
  if (headroom.balance !== undefined) headers[HEADROOM_HEADERS.balance] = String(headroom.balance);
  return headers;
}

/** The headers as the route table describes them (openapi.json). */
export const HEADROOM_HEADER_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [HEADROOM_HEADERS.daily]:
    "Keys with a daily limit: micro-USD the limit leaves today (UTC) after this request's worst case, " +
    "computed at admission (limit − settled spend − reservations in flight, this one included)",
  [HEADROOM_HEADERS.monthly]: "Keys with a monthly limit: as the daily one, for this month (UTC)",
  [HEADROOM_HEADERS.total]: "Keys with a total limit: as the daily one, since the key's last total reset",
  [HEADROOM_HEADERS.balance]:
    "Keys with any spend limit, workspaces not invoiced: micro-USD the workspace's balance leaves " +
    "after its requests in flight, this one's worst case included",
};
