import { createHash } from "node:crypto";

/** OpenAI's limit on `safety_identifier` (and what it enforces on `user`), in characters. */
export const MAX_END_USER_ID_LENGTH = 64;

/**
 * An end-user identifier as an upstream with a length limit takes it: unchanged when it fits, else
 * a stable hash of it (`hi-` and 43 base64url characters), so a long identifier (Claude Code's
 * `metadata.user_id` is a JSON string of about 150 characters) still names the same user on every
 * request and is never the reason a request is refused.
 */
export function fitEndUserId(id: string, maxLength = MAX_END_USER_ID_LENGTH): string {
  if (id.length <= maxLength) return id;
  return `hi-${createHash("sha256").update(id).digest("base64url")}`;
}
