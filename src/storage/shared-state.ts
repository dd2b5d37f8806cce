/** Opens SharedState for either runtime mode (DESIGN §2): Redis when a URL is given, else in-process. */
import { createInProcessSharedState } from "./in-process-shared-state.js";
import type { SharedState } from "./types.js";

export interface OpenSharedStateOptions {
  redisUrl?: string;
  /** Redis only: prepended to every key and channel name. */
  prefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Redis only: connection errors after startup (reconnects happen by themselves). */
  onError?: (error: Error) => void;
}

/**
 * With a URL, rejects when Redis cannot be reached within the connect deadline, so a wrong
 * REDIS_URL fails at startup; later outages are survived by reconnecting.
 */
export async function openSharedState(options: OpenSharedStateOptions = {}): Promise<SharedState> {
  if (!options.redisUrl) return createInProcessSharedState();
  // Loaded only here: an embedded gateway never needs ioredis.
  const { createRedisSharedState } = await import("./redis-shared-state.js");
  return createRedisSharedState({ ...options, redisUrl: options.redisUrl });
}
