/**
 * The rules of one-time playground keys: a key lives 10 minutes, a user may mint 10 per minute
 * (thresholds of our choosing).
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
