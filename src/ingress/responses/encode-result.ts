/** A canonical result → the response object of spec §2.5 (status `completed` or `incomplete`). */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../ingress-format.js";
import {
  createResponseEcho,
  createResponseObject,
  type ResponseObject,
  type ResponsesEncodeContext,
} from "./create-response-object.js";
import { encodeOutputItems } from "./encode-output-items.js";
import { encodeResponsesUsage } from "./encode-usage.js";
import { mapResponseStatus } from "./map-response-status.js";

export function encodeResponsesResult(
  result: CanonicalResult,
  settlement: Settlement,
  context: ResponsesEncodeContext,
): ResponseObject {
  const { status, incomplete_details } = mapResponseStatus(result.finishReason);
  return createResponseObject(context, createResponseEcho(context.request), {
    status,
    incompleteDetails: incomplete_details,
    completedAt: status === "completed" ? readCompletedAt(context.createdAt) : null,
    output: encodeOutputItems(result.content, context.requestId),
    usage: encodeResponsesUsage(settlement.usage, settlement.costMicroUsd),
  });
}

/** Unix seconds now, never before the creation time (clocks of two calls can disagree by a second). */
export function readCompletedAt(createdAt: number): number {
  return Math.max(createdAt, Math.floor(Date.now() / 1000));
}
