/**
 * `X-Internal-Token` checks for internal endpoints. Both sides are hashed first, so
 * timingSafeEqual compares equal lengths and the comparison time reveals neither the secret's
 * length nor how much of a guess matched.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export function isInternalTokenValid(given: string | undefined, expected: string | undefined): boolean {
  // Hash even when there is nothing to compare, so a missing header costs the same time.
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  const same = timingSafeEqual(digest(given ?? ""), digest(expected ?? ""));
  return same && given !== undefined && expected !== undefined && expected !== "";
}
