/**
 * The events of a format encoder's SSE text, one string each: what a WebSocket sends as one text
 * message per event. The encoders write `event: <type>\ndata: <json>\n\n`; an event's data is its
 * `data:` lines joined with "\n" (the SSE rule), and blocks without data (the keep-alive comment)
 * are not events. One pass over the text.
 */
export function splitSseEvents(frames: string): string[] {
  const events: string[] = [];
  let start = 0;
  while (start < frames.length) {
    let end = frames.indexOf("\n\n", start);
    if (end === -1) end = frames.length;
    const data = readEventData(frames, start, end);
    if (data !== undefined) events.push(data);
    start = end + 2;
  }
  return events;
}

function readEventData(frames: string, start: number, end: number): string | undefined {
  let data: string | undefined;
  let lineStart = start;
  while (lineStart < end) {
    let lineEnd = frames.indexOf("\n", lineStart);
    if (lineEnd === -1 || lineEnd > end) lineEnd = end;
    if (frames.startsWith("data:", lineStart)) {
      // One space after the colon is part of the syntax, not of the value.
      const valueStart = lineStart + (frames.charCodeAt(lineStart + 5) === 0x20 ? 6 : 5);
      const value = frames.slice(valueStart, lineEnd);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    lineStart = lineEnd + 1;
  }
  return data;
}
