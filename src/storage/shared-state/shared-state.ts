/** Opens SharedState for either runtime mode: Redis when a URL is given, else in-process. */

import type { SharedState } from "../store.js";
import { createInProcessSharedState } from "./in-process-shared-state.js";

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
 * With a URL, resolves even when Redis cannot be reached within the connect deadline (reported
 * through `onError`): the connections keep trying, commands fail fast until one succeeds, and
 * readiness says so. A malformed URL still throws.
 */
export async function openSharedState(options: OpenSharedStateOptions = {}): Promise<SharedState> {
  if (!options.redisUrl) return createInProcessSharedState();
  // Loaded only here: an embedded gateway never needs ioredis.
  const { createRedisSharedState } = await import("./redis-shared-state.js");
  return createRedisSharedState({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    connectTimeoutMs: options.connectTimeoutMs,
    commandTimeoutMs: options.commandTimeoutMs,
    onError: options.onError,
  });
}
