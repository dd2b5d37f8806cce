/** The API formats a caller may speak; stored with each generation record. */
export type IngressFormatName = "chat_completions" | "responses" | "anthropic_messages";

/**
 * A stored format name as it reads today: records written before the Messages format got its own
 * name say `vendor_messages` (the contract's text had replaced the brand word, and so had the value).
 */
export function readIngressFormatName(stored: string): IngressFormatName {
  return stored === "vendor_messages" ? "anthropic_messages" : (stored as IngressFormatName);
}
