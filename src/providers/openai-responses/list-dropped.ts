/**
 * What a Responses upstream goes without (ProviderAdapter.listDropped): the extras of other wire
 * families, and the passthrough fields it does not take: another format's (meaningless to it) and
 * the ones build-request.ts keeps back.
 */

import type { UpstreamCall } from "../provider-adapter.js";
import { isPassthroughFrom } from "../shared/is-passthrough-from.js";
import { describeExtra, listDroppedPassthrough, listForeignExtras } from "../shared/wire-extras.js";
import { NOT_FORWARDED } from "./build-request.js";

export function listResponsesDropped(call: UpstreamCall): string[] {
  const { request } = call;
  const sameFormat = isPassthroughFrom(request, "responses");
  return [
    ...listForeignExtras(request, "responses").map(describeExtra),
    ...listDroppedPassthrough(request, (key) => sameFormat && !NOT_FORWARDED.has(key)),
  ];
}
