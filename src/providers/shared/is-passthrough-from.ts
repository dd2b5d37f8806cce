import type { CanonicalRequest } from "../../canonical/index.js";

/** Whether the caller's unknown top-level fields came in the wire format this adapter speaks. */
export function isPassthroughFrom(
  request: CanonicalRequest,
  format: NonNullable<CanonicalRequest["passthroughFormat"]>,
): boolean {
  return request.passthroughFormat === undefined || request.passthroughFormat === format;
}
