/**
 * The JSON shape bounds of a request body under this configuration: an array may always hold as
 * many items as the configured message, content-block and tool caps allow (those caps, checked
 * after the parse, refuse with their own message).
 */
import type { RequestShapeLimits } from "../../ingress/shared/check-request-shape.js";
import { DEFAULT_JSON_SHAPE_LIMITS, type JsonShapeLimits } from "./json-shape-scanner.js";

export function createRequestJsonShape(caps: RequestShapeLimits): JsonShapeLimits {
  const maxItems = Math.max(
    DEFAULT_JSON_SHAPE_LIMITS.maxItems,
    caps.maxMessages,
    caps.maxContentParts,
    caps.maxTools,
  );
  return Object.assign({}, DEFAULT_JSON_SHAPE_LIMITS, { maxItems });
}
