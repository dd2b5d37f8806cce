/**
 * The admin service announces key changes by publishing on `gateway:key-changed`. On the instance
 * that made the change, waiting for that message to come back from Redis leaves a window in which
 * the old cache entry still admits requests, and with Redis down the message never comes. Giving
 * the admin service this wrapper evicts locally first, so the change applies to the very next
 * request here whatever Redis does.
 */
import { type Authenticator, KEY_CHANGED_CHANNEL } from "./authenticate.js";
import type { Announcements } from "./ports.js";

/** Another per-instance cache kept fresh by announcements (e.g. engine/admission-snapshots.ts). */
export interface AnnouncedCache {
  evictFor(channel: string, message: string): void;
}

export function evictBeforePublish<State extends Announcements>(
  state: State,
  authenticator: Authenticator,
  ...caches: AnnouncedCache[]
): State {
  // Everything but publish is the state itself (spread keeps every other method of the state).
  return {
    ...state,
    async publish(channel: string, message: string) {
      if (channel === KEY_CHANGED_CHANNEL) authenticator.evict(readKeyId(message));
      for (const cache of caches) cache.evictFor(channel, message);
      await state.publish(channel, message);
    },
  };
}

/** undefined (evict everything) when the message names no key. */
function readKeyId(message: string): string | undefined {
  try {
    const keyId = (JSON.parse(message) as { keyId?: unknown }).keyId;
    return typeof keyId === "string" ? keyId : undefined;
  } catch {
    return undefined;
  }
}
