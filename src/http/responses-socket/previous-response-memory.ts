/**
 * What a Responses WebSocket keeps between its turns, and how a turn's body is built from it.
 *
 * The gateway keeps no state, except this: a socket remembers the last response it created (its
 * whole input, its own earlier history included, followed by its output items, as they went over
 * the wire), so the next `response.create` on the same socket may name it in
 * `previous_response_id` and send only the new items. The turn's body is then that history
 * followed by the new input, and goes through the same decode, admission and metering as a
 * `POST /api/v1/responses` carrying the whole conversation. Nothing else is carried over:
 * `instructions`, tools and settings come from each message alone.
 *
 * Bounds: one response per socket, and at most the body cap (`limits.max_body_bytes`) of it,
 * counted as the bytes its messages and output events took. A longer history is not kept: a turn
 * naming it would be over the body cap anyway, as the same request over HTTP would be. A response
 * that failed replaces nothing. Any other `previous_response_id` (another socket's response, an
 * older one, one that was not kept) is refused with `invalid_request` naming the field.
 */
import { GatewayError } from "../../errors/gateway-error.js";
import type { ResponseCreateEvent } from "./read-client-event.js";

export interface KeptResponse {
  /** The response's id as its events gave it (`resp_…`). */
  id: string;
  /** Its input items followed by its output items. */
  items: readonly unknown[];
  /** Bytes those items took on the wire (messages in, events out): the bound's measure. */
  bytes: number;
}

export interface TurnBody {
  /** The Responses body the turn is decoded from: the event's fields, `stream: true`, the history. */
  body: Record<string, unknown>;
  /** The turn's whole input as items (the history included), kept with its output afterwards. */
  items: readonly unknown[];
  bytes: number;
}

export function buildTurnBody(
  event: ResponseCreateEvent,
  messageBytes: number,
  kept: KeptResponse | undefined,
  maxBytes: number,
): TurnBody {
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(event.fields)) body[key] = event.fields[key];
  // Every turn streams, whatever the message said.
  body.stream = true;
  const input = event.fields.input;
  if (event.previousResponseId === undefined) {
    return { body, items: readInputItems(input) ?? [], bytes: messageBytes };
  }
  if (kept === undefined || kept.id !== event.previousResponseId) {
    throw GatewayError.invalidRequest(
      `Previous response ${JSON.stringify(event.previousResponseId.slice(0, 64))} is not the last ` +
        "response of this WebSocket connection (a connection keeps only its own last response, in " +
        "memory); send the whole conversation in input without previous_response_id",
      "previous_response_id",
    );
  }
  const bytes = kept.bytes + messageBytes;
  if (bytes > maxBytes) {
    throw new GatewayError(
      "payload_too_large",
      `The conversation (the previous response's input and output, and this input) exceeds the ` +
        `request limit of ${maxBytes} bytes`,
    );
  }
  const added = readInputItems(input);
  if (added === undefined) {
    throw GatewayError.invalidRequest("input must be a string or an array of input items", "input");
  }
  const items = [...kept.items, ...added];
  body.input = items;
  return { body, items, bytes };
}

/** The response to keep after a turn, or undefined when it is over the bound. */
export function keepResponse(
  id: string,
  turn: TurnBody,
  output: readonly unknown[],
  outputBytes: number,
  maxBytes: number,
): KeptResponse | undefined {
  const bytes = turn.bytes + outputBytes;
  if (bytes > maxBytes) return undefined;
  return { id, items: [...turn.items, ...output], bytes };
}

/** `input` as items: a string is one user message; absent is none; undefined: not an input. */
function readInputItems(input: unknown): readonly unknown[] | undefined {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input : undefined;
}
