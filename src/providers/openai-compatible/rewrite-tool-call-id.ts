/**
 * Tool-call id rewriting for hosts that demand their own id shape. Mistral
 * rejects any id that is not exactly 9 characters of [a-zA-Z0-9], so a history holding `call_…`
 * (OpenAI) or `toolu_…` (Anthropic) ids fails on the second turn.
 *
 * The rewrite is a pure function of the original id, so an assistant tool call and the tool result
 * that answers it map to the same new id in every request of a conversation, without the gateway
 * storing anything. Ids the host produced itself already have the right shape and are kept, so a
 * conversation that stays on that host sends its ids back unchanged. Ids in responses are never
 * rewritten: the caller gets them exactly as the host sent them.
 */
import { createHash } from "node:crypto";
import type { ProviderQuirks } from "../../catalog/types.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ALPHANUMERIC_9 = /^[A-Za-z0-9]{9}$/;

export type ToolCallIdRewriter = (id: string) => string;

export function createToolCallIdRewriter(format: ProviderQuirks["toolCallIdFormat"]): ToolCallIdRewriter {
  switch (format) {
    case "alphanumeric-9":
      return (id) => (ALPHANUMERIC_9.test(id) ? id : hashToAlphanumeric(id, 9));
    case "any":
      return (id) => id;
  }
}

/**
 * `length` base62 characters derived from SHA-256 of `id`. 62^9 ≈ 1.4·10^16 values: two distinct
 * ids of one conversation colliding is not a practical concern.
 */
export function hashToAlphanumeric(id: string, length: number): string {
  let value = BigInt(`0x${createHash("sha256").update(id, "utf8").digest("hex")}`);
  let result = "";
  for (let position = 0; position < length; position += 1) {
    result += BASE62[Number(value % 62n)];
    value /= 62n;
  }
  return result;
}
