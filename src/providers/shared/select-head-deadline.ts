/**
 * How long one upstream call may wait for its response head (request sent → status and headers).
 *
 * A streamed upstream sends its head as soon as it starts answering, so a silent one has stalled:
 * while another route waits to be tried, the provider's first-byte deadline (seconds) moves the
 * run on. A non-streamed upstream sends its head only with the whole answer, so silence is not a
 * stall there, and a call with no route left to fail over to gains nothing from giving up early:
 * both wait the response deadline.
 */
import type { ProviderTimeouts } from "../../catalog/types.js";

export function selectHeadDeadlineMs(
  timeouts: ProviderTimeouts,
  call: { stream: boolean; anotherRouteWaits: boolean },
): number {
  return call.stream && call.anotherRouteWaits ? timeouts.firstByteMs : timeouts.responseMs;
}
