/**
 * `anthropic-beta: a,b` (possibly repeated: `Headers.get` joins repeated lines with ", ") → the
 * distinct beta names in order of first appearance. Whether they reach an upstream is the adapter's
 * decision.
 */
import type { HeaderReader } from "../ingress-format.js";
export function parseAnthropicBetaHeader(headers: HeaderReader | undefined): string[] {
  const value = headers?.get("anthropic-beta");
  if (value === null || value === undefined) return [];
  const betas = new Set<string>();
  for (const name of value.split(",")) {
    const trimmed = name.trim();
    if (trimmed !== "") betas.add(trimmed);
  }
  return [...betas];
}
