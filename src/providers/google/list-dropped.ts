/**
 * What a Gemini upstream goes without (ProviderAdapter.listDropped): no ingress format is its wire
 * format, so every extra, and the passthrough fields other than its own (build-request.ts).
 */
import type { UpstreamCall } from "../provider-adapter.js";
import { describeExtra, listDroppedPassthrough, listForeignExtras } from "../shared/wire-extras.js";
import { PASSTHROUGH_FIELDS } from "./build-request.js";

export function listGoogleDropped(call: UpstreamCall): string[] {
  const { request } = call;
  return [
    ...listForeignExtras(request, undefined).map(describeExtra),
    ...listDroppedPassthrough(request, (key) => Object.hasOwn(PASSTHROUGH_FIELDS, key)),
  ];
}
