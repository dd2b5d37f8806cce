/**
 * A `fetch` for the official clients that records the raw HTTP exchange (status, headers, body text)
 * while the client reads the response as usual, so the matrix can check the bytes the gateway sent —
 * SSE framing, schema validity of the unparsed JSON — next to what the SDK made of them.
 */

export interface TappedExchange {
  url: string;
  status: number;
  headers: Headers;
  /** The whole body as text; "" when it could not be read (the client aborted). */
  body: Promise<string>;
}

export interface WireTap {
  fetch: typeof fetch;
  readonly exchanges: TappedExchange[];
  /** The exchanges recorded since `mark` (an earlier `exchanges.length`). */
  since(mark: number): TappedExchange[];
}

export function createWireTap(): WireTap {
  const exchanges: TappedExchange[] = [];
  const tapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const body = response
      .clone()
      .text()
      .catch(() => "");
    exchanges.push({ url: String(input), status: response.status, headers: response.headers, body });
    return response;
  };
  return { fetch: tapped, exchanges, since: (mark) => exchanges.slice(mark) };
}

export interface SseFrame {
  /** The `event:` name, undefined when the frame has none. */
  event?: string;
  /** The `data:` payload (lines joined by "\n"). */
  data: string;
}

/** Splits an SSE body into frames (comments and keep-alives dropped). */
export function parseSseFrames(body: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of body.replaceAll("\r\n", "\n").split("\n\n")) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) frames.push({ ...(event === undefined ? {} : { event }), data: data.join("\n") });
  }
  return frames;
}
