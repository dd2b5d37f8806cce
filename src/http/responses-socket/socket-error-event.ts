/**
 * The `error` event of a Responses WebSocket for a turn refused before its stream began (or a
 * message refused outright): `{"type":"error","status":<HTTP status>,"error":{…}}`, where `error`
 * is the object the same refusal carries over HTTP (message, type, code, param, request_id,
 * retry_after_seconds) and `status` the HTTP status it would have had. An error after the stream
 * began is the stream's own `error` and `response.failed` events, as over SSE.
 */
import { createCommonErrorEnvelope } from "../../errors/envelopes.js";
import type { GatewayError } from "../../errors/gateway-error.js";

export function createSocketErrorEvent(error: GatewayError, requestId: string): string {
  return JSON.stringify({
    type: "error",
    status: error.status,
    error: createCommonErrorEnvelope(error, requestId).error,
  });
}

/** An event with the turn's lane added (`stream_id`), or as it is when the turn named none. */
export function createLaneDecorator(streamId: string | undefined): (event: string) => string {
  if (streamId === undefined) return (event) => event;
  const member = `{"stream_id":${JSON.stringify(streamId)},`;
  // Every event is a JSON object: the member goes right after its opening brace.
  return (event) => member + event.slice(1);
}
