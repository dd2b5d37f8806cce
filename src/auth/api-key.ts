/** API key material: `hi-` + 40 base62 characters; stored only as its SHA-256 hash. */
import { hash, randomBytes } from "node:crypto";

export const API_KEY_PREFIX = "hi-";
const KEY_BODY_LENGTH = 40;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = /^hi-[0-9A-Za-z_-]{16,128}$/;

export interface GeneratedApiKey {
  /** Shown once to the user, never stored. */
  secret: string;
  hash: string;
  /** Display form: prefix plus last four characters, e.g. `hi-…a1B2`. */
  display: string;
}

export function generateApiKey(): GeneratedApiKey {
  const bytes = randomBytes(KEY_BODY_LENGTH);
  let body = "";
  for (const byte of bytes) body += BASE62[byte % 62];
  const secret = API_KEY_PREFIX + body;
  return { secret, hash: hashApiKey(secret), display: describeApiKey(secret) };
}

/** Every authenticated request hashes its key: the one-shot `hash` makes no Hash object. */
export function hashApiKey(secret: string): string {
  return hash("sha256", secret, "hex");
}

export function describeApiKey(secret: string): string {
  return `${API_KEY_PREFIX}…${secret.slice(-4)}`;
}

/** Syntactic check only; a well-formed key can still be unknown. */
export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
