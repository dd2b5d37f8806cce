/**
 * The admin service announces key changes on `gateway:key-changed` and credit changes on
 * `gateway:balance-changed`. On the instance
 * that made the change, waiting for that message to come back from Redis leaves a window in which
 * the old cache entry still admits requests, and with Redis down the message never comes. Giving
 * the admin service this wrapper evicts locally first, so the change applies to the very next
 * request here whatever Redis does.
 */
import type { Authenticator } from "./authenticate.js";
import type { Announcements } from "./ports.js";

/** Another per-instance cache kept fresh by announcements. */
export interface AnnouncedCache {
  evictFor(channel: string, message: string): void;
}

export function evictBeforePublish<State extends Announcements>(
  state: State,
  authenticator: Authenticator,
  ...caches: AnnouncedCache[]
): State {
  // Everything but publish is the state itself (every other method of the state is copied).
  return Object.assign({}, state, {
    async publish(channel: string, message: string) {
      authenticator.evictFor(channel, message);
      for (const cache of caches) cache.evictFor(channel, message);
      await state.publish(channel, message);
    },
  });
}
