/** Mints a one-time key for a platform user, or refuses with `rate_limit_exceeded` (429). */
import { GatewayError } from "../errors/gateway-error.js";
import type { MintedPlaygroundKey, OneTimeKeySource } from "./accounts.js";
import type { PlaygroundKeyPolicy } from "./playground-key-policy.js";
import type { AuthStore } from "./ports.js";

export interface MintPlaygroundKeyInput {
  workspaceId: string;
  userId: string;
  source: OneTimeKeySource;
}

export async function mintPlaygroundKey(
  store: Pick<AuthStore, "playgroundKeys">,
  policy: PlaygroundKeyPolicy,
  input: MintPlaygroundKeyInput,
): Promise<MintedPlaygroundKey> {
  const minted = await store.playgroundKeys.mint({
    workspaceId: input.workspaceId,
    userId: input.userId,
    source: input.source,
    ttlMs: policy.ttlMs,
    limit: policy.mintLimit,
    windowMs: policy.mintWindowMs,
  });
  if ("rateLimited" in minted) {
    throw new GatewayError(
      "rate_limit_exceeded",
      `This user minted ${policy.mintLimit} playground keys in the last ${Math.round(policy.mintWindowMs / 1000)} s; retry later`,
      { retryAfterSeconds: minted.retryAfterSeconds },
    );
  }
  return minted;
}
