/**
 * What an Anthropic upstream goes without (ProviderAdapter.listDropped): the extras of other wire
 * families, a `thinking.display` when no thinking goes (a model that does not reason), and the
 * passthrough fields Anthropic does not know (build-request.ts forwards only its own).
 */
import type { UpstreamCall } from "../provider-adapter.js";
import {
  describeExtra,
  extraFieldsFor,
  hasHolder,
  listDroppedPassthrough,
  listForeignExtras,
} from "../shared/wire-extras.js";
import { PASSTHROUGH_FIELDS, SERVICE_TIERS } from "./build-request.js";
import { resolveThinking } from "./resolve-thinking.js";

export function listAnthropicDropped(call: UpstreamCall): string[] {
  const { request } = call;
  const dropped = listForeignExtras(request, "anthropic_messages").map(describeExtra);
  const fields = extraFieldsFor(request, "anthropic_messages");
  if (fields.length > 0) {
    const holders = { thinking: readThinking(call) };
    for (const field of fields) if (!hasHolder(holders, field.path)) dropped.push(describeExtra(field));
  }
  dropped.push(
    ...listDroppedPassthrough(
      request,
      (key, value) =>
        PASSTHROUGH_FIELDS.has(key) &&
        (key !== "service_tier" || (typeof value === "string" && SERVICE_TIERS.has(value))),
    ),
  );
  return dropped;
}

/** The thinking the body will carry; a request it refuses is refused by the build itself. */
function readThinking(call: UpstreamCall): unknown {
  try {
    return resolveThinking(call);
  } catch {
    return undefined;
  }
}
