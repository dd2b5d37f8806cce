/** A canonical result → the response object (status `completed` or `incomplete`). */
import type { CanonicalResult } from "../../canonical/index.js";
import type { Settlement } from "../../canonical/settlement.js";
import {
  createResponseEcho,
  createResponseObject,
  type ResponseObject,
  type ResponsesEncodeContext,
} from "./create-response-object.js";
import { encodeOutputItems } from "./encode-output-items.js";
import { encodeResponsesUsage } from "./encode-usage.js";
import type { ItemSeal } from "./item-seal.js";
import { mapResponseStatus } from "./map-response-status.js";

/** With `itemSeal`, item ids carry their items unless the request set `store: false` (item-seal.ts). */
export function encodeResponsesResult(
  result: CanonicalResult,
  settlement: Settlement,
  context: ResponsesEncodeContext,
  itemSeal?: ItemSeal,
): ResponseObject {
  const seal = context.request?.noItemReferences === true ? undefined : itemSeal;
  const { status, incomplete_details } = mapResponseStatus(result.finishReason);
  return createResponseObject(context, createResponseEcho(context.request), {
    status,
    incompleteDetails: incomplete_details,
    completedAt: status === "completed" ? readCompletedAt(context.createdAt) : null,
    output: encodeOutputItems(result.content, context.requestId, seal, status === "incomplete"),
    usage: encodeResponsesUsage(settlement.usage, settlement.costMicroUsd),
  });
}

/** Unix seconds now, never before the creation time (clocks of two calls can disagree by a second). */
export function readCompletedAt(createdAt: number): number {
  return Math.max(createdAt, Math.floor(Date.now() / 1000));
}
