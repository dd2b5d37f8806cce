/**
 * The rules of one-time playground keys (spec §3, §5.12; thresholds are ours, spec §8 leaves them
 * open): a key lives 10 minutes, a user may mint 10 per minute.
 */
export interface PlaygroundKeyPolicy {
  ttlMs: number;
  mintLimit: number;
  mintWindowMs: number;
  /** How often expired keys are hard-purged from the database. */
  purgeIntervalMs: number;
}

export const DEFAULT_PLAYGROUND_KEY_POLICY: PlaygroundKeyPolicy = {
  ttlMs: 10 * 60_000,
  mintLimit: 10,
  mintWindowMs: 60_000,
  purgeIntervalMs: 60_000,
};
