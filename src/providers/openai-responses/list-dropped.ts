/**
 * What a Responses upstream goes without (ProviderAdapter.listDropped): the extras of other wire
 * families, and the passthrough fields it does not take: another format's (meaningless to it) and
 * the ones build-request.ts keeps back.
 */

import type { UpstreamCall } from "../provider-adapter.js";
import { readOpenAiPassthrough } from "../shared/openai-shared-fields.js";
import { describeExtra, listDroppedPassthrough, listForeignExtras } from "../shared/wire-extras.js";
import { NOT_FORWARDED } from "./build-request.js";

export function listResponsesDropped(call: UpstreamCall): string[] {
  const { request } = call;
  const taken = readOpenAiPassthrough(request, "responses");
  return [
    ...listForeignExtras(request, "responses").map(describeExtra),
    ...listDroppedPassthrough(request, (key) => key in taken && !NOT_FORWARDED.has(key)),
  ];
}
