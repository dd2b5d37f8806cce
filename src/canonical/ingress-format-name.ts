/** The API formats a caller may speak; stored with each generation record. */
export type IngressFormatName = "chat_completions" | "responses" | "vendor_messages";
