/**
 * What a Chat Completions upstream goes without (ProviderAdapter.listDropped): the extras of other
 * wire families, and the passthrough fields of another format (meaningless to it).
 */

import type { UpstreamCall } from "../provider-adapter.js";
import { readOpenAiPassthrough } from "../shared/openai-shared-fields.js";
import { describeExtra, listDroppedPassthrough, listForeignExtras } from "../shared/wire-extras.js";
import { PROTECTED_FIELDS } from "./build-request.js";

export function listChatDropped(call: UpstreamCall): string[] {
  const { request } = call;
  const taken = readOpenAiPassthrough(request, "chat_completions");
  return [
    ...listForeignExtras(request, "chat_completions").map(describeExtra),
    // `stream_options` is protected because the gateway sets it itself, keeping the caller's options.
    ...listDroppedPassthrough(
      request,
      (key) => key in taken && (!PROTECTED_FIELDS.has(key) || key === "stream_options"),
    ),
  ];
}
