/**
 * One client message of a Responses WebSocket, read into what a turn needs.
 *
 * A message is one JSON object with a `type`. `response.create` carries the fields of a
 * `POST /api/v1/responses` body next to the socket's own: `stream_id` (a lane name echoed on the
 * turn's events), `generate` (false: a warmup that generates nothing) and `previous_response_id`
 * (resolved against what the socket kept, previous-response-memory.ts). `stream` is implied (every
 * turn streams), so its value is ignored. `response.processed` (a client acknowledging a response
 * it has handled) asks nothing of the gateway and is ignored. Any other type, or a message that is
 * not such an object, is refused with `invalid_request` naming the field. The message is read as a
 * request body is: its shape checked before it is parsed, a large one parsed in slices
 * (read-scanned-json.ts).
 */
import { GatewayError } from "../../errors/gateway-error.js";
import { DEFAULT_JSON_SHAPE_LIMITS, type JsonShapeLimits } from "../json/json-shape-scanner.js";
import { parseJsonBytes } from "../json/read-scanned-json.js";

export interface ResponseCreateEvent {
  type: "response.create";
  /** The lane the client named; its events carry it back. */
  streamId: string | undefined;
  /** false: a warmup, answered without generating. */
  generate: boolean;
  previousResponseId: string | undefined;
  /** The Responses body fields, without the socket's own (`type`, `stream_id`, `generate`, …). */
  fields: Record<string, unknown>;
}

export type ClientEvent = ResponseCreateEvent | { type: "ignored" };

/** Event types that need no answer. */
const IGNORED_TYPES: ReadonlySet<string> = new Set(["response.processed"]);

/** Fields of the socket protocol, not of the Responses body. */
const ENVELOPE_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "stream_id",
  "generate",
  "previous_response_id",
  "stream",
]);

const STREAM_ID_PATTERN = /^[A-Za-z0-9_.-]{1,256}$/;

export async function readClientEvent(
  bytes: Uint8Array,
  shape: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS,
): Promise<ClientEvent> {
  const message = checkMessage(await parseJsonBytes(bytes, shape));
  const type = message.type;
  if (typeof type !== "string") {
    throw GatewayError.invalidRequest("A client event needs a string `type`, e.g. response.create", "type");
  }
  if (IGNORED_TYPES.has(type)) return { type: "ignored" };
  if (type !== "response.create") {
    throw GatewayError.invalidRequest(
      `Unsupported client event type ${JSON.stringify(type.slice(0, 64))}; this socket accepts response.create`,
      "type",
    );
  }
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(message)) {
    if (!ENVELOPE_FIELDS.has(key)) fields[key] = message[key];
  }
  return {
    type,
    streamId: readStreamId(message.stream_id),
    generate: readGenerate(message.generate),
    previousResponseId: readPreviousResponseId(message.previous_response_id),
    fields,
  };
}

function checkMessage(message: unknown): Record<string, unknown> {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    throw GatewayError.invalidRequest(
      "A client event is a JSON object with a `type`, e.g. response.create",
      null,
    );
  }
  return message as Record<string, unknown>;
}

function readStreamId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && STREAM_ID_PATTERN.test(value)) return value;
  throw GatewayError.invalidRequest(
    "stream_id must be 1 to 256 characters of letters, digits, '_', '.' and '-'",
    "stream_id",
  );
}

function readGenerate(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "boolean") return value;
  throw GatewayError.invalidRequest("generate must be a boolean", "generate");
}

function readPreviousResponseId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && value !== "") return value;
  throw GatewayError.invalidRequest(
    "previous_response_id must be a response id (a string)",
    "previous_response_id",
  );
}
