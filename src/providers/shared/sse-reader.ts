/**
 * Reads an upstream `text/event-stream` body into SSE events. eventsource-parser does the framing
 * (LF, CR and CRLF line ends, `:` comments, multi-line `data:`, `event:` names); a streaming
 * TextDecoder keeps multi-byte UTF-8 characters intact when they straddle two network chunks.
 * Payloads are returned as text: JSON padding (Anthropic's trailing spaces) is the JSON parser's
 * business, never string matching's.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { GatewayError } from "../../errors/gateway-error.js";
import { letIoIn, readTurnMs, TURN_BUDGET_MS } from "./loop-turn.js";
import { createStreamTurns } from "./stream-turns.js";

export interface SseEvent {
  /** The `event:` name, undefined when the frame had none. */
  event?: string;
  data: string;
  id?: string;
}

export interface ReadSseOptions {
  /**
   * Largest single event (or unterminated line) the parser buffers, in characters. A stream that
   * exceeds it fails with `provider_unavailable` instead of growing memory without bound.
   */
  maxEventSize?: number;
}

const DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024;
/** Characters of a network chunk parsed at a time: what one batch of events comes from at most. */
const FEED_CHARS = 16 * 1024;

/** Yields the SSE events of `body` in order (readSseEventBatches, one by one). */
export async function* readSseEvents(
  body: AsyncIterable<Uint8Array | string>,
  options: ReadSseOptions = {},
): AsyncGenerator<SseEvent> {
  for await (const events of readSseEventBatches(body, options)) yield* events;
}

/**
 * Yields the SSE events of `body` in order, the events completed by each network chunk as one
 * array (never an empty one). Errors of the body (deadlines, resets, aborts) are propagated
 * unchanged so the caller can classify them with its own context. At the end of the body an event
 * still missing its blank-line terminator is delivered rather than dropped: some servers close
 * right after the last `data:` line.
 *
 * Whatever the events' consumers do with a batch runs before the reader goes on, so a chunk is
 * parsed 16 K characters at a time, and before each piece the reader lets other I/O in once the
 * event loop's turn has run past its budget (loop-turn.ts): a long answer already read from the
 * socket is then parsed, encoded and written a few milliseconds at a time instead of in one turn.
 */
export async function* readSseEventBatches(
  body: AsyncIterable<Uint8Array | string>,
  options: ReadSseOptions = {},
): AsyncGenerator<SseEvent[]> {
  // Swapped out whole after each chunk, never shifted: one network chunk can hold many thousands
  // of small events, and Array#shift is linear in what is left (quadratic per chunk).
  let pending: SseEvent[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: options.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE,
    onEvent: (message: EventSourceMessage) => pending.push(toSseEvent(message)),
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow = true;
      // Unknown fields and bad `retry:` values are ignorable per the SSE spec.
    },
  });
  const decoder = new TextDecoder("utf-8");
  // Leaving this loop early (the parser saw `[DONE]`) must not destroy a Node stream: its owner
  // decides whether to read it to the end (keep-alive) or cut it (create-http-adapter.ts).
  const readable = body as AsyncIterable<Uint8Array | string> & {
    iterator?: (options: { destroyOnReturn: boolean }) => AsyncIterable<Uint8Array | string>;
  };
  const chunks =
    typeof readable.iterator === "function" ? readable.iterator({ destroyOnReturn: false }) : body;

  // Streams with data waiting take turns at it (stream-turns.ts): a chunk is worked through soon
  // after it was read.
  const turns = createStreamTurns();
  const readAhead = body as { readableLength?: number };
  try {
    for await (const chunk of chunks) {
      const turn = turns.take(chunk.length);
      if (turn !== undefined) await turn;
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      for (let start = 0; start < text.length; start += FEED_CHARS) {
        if (start > 0) {
          const next = turns.take(0);
          if (next !== undefined) await next;
        }
        if (readTurnMs() > TURN_BUDGET_MS) await letIoIn();
        parser.feed(text.length <= FEED_CHARS ? text : text.slice(start, start + FEED_CHARS));
        if (overflow) {
          throw new GatewayError("provider_unavailable", "The upstream stream sent an oversized event");
        }
        if (pending.length > 0) yield takePending();
      }
      // Nothing read ahead: the next chunk comes from the network (an undici body says so).
      if (!((readAhead.readableLength ?? 0) > 0)) turns.awaitNetwork();
    }
  } finally {
    turns.release();
  }

  const rest = decoder.decode();
  // Two line ends dispatch a final unterminated event (one ends the line, one ends the event).
  parser.feed(`${rest}\n\n`);
  if (pending.length > 0) yield takePending();

  function takePending(): SseEvent[] {
    const ready = pending;
    pending = [];
    return ready;
  }
}

function toSseEvent(message: EventSourceMessage): SseEvent {
  return {
    data: message.data,
    ...(message.event === undefined ? {} : { event: message.event }),
    ...(message.id === undefined ? {} : { id: message.id }),
  };
}
