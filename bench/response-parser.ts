/**
 * An incremental HTTP/1.1 response parser for the load generator: status, Content-Length or
 * chunked bodies (what Node servers send for streams), and the moment the first body byte arrives
 * (time to first byte of a stream). Just enough of HTTP for loopback servers we start ourselves;
 * anything else is reported as a protocol error rather than guessed at.
 */

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 1024;

export interface ParsedResponse {
  status: number;
  /** performance.now() when the first body byte arrived; undefined for an empty body. */
  firstBodyAt?: number;
  bodyBytes: number;
  /** The body (chunked framing removed), when capture was asked for. */
  body?: string;
  /** false when the server will close the connection after this response. */
  keepAlive: boolean;
}

type State =
  | "head"
  | "length"
  | "chunk-size"
  | "chunk-data"
  | "chunk-end"
  | "trailers"
  | "until-close"
  | "done";

export class ResponseParser {
  private state: State = "head";
  private head: Buffer = Buffer.alloc(0);
  private line = "";
  private remaining = 0;
  private readonly captured: Buffer[] | undefined;
  private readonly result: ParsedResponse = { status: 0, bodyBytes: 0, keepAlive: true };

  constructor(capture = false) {
    this.captured = capture ? [] : undefined;
  }

  get done(): boolean {
    return this.state === "done";
  }

  /** true while the body runs until the connection closes (no length, not chunked). */
  get readsUntilClose(): boolean {
    return this.state === "until-close";
  }

  /**
   * Feeds bytes; returns how many bytes after the end of the response were left over (0 unless
   * the server sent more than one response, which a non-pipelined client never asks for).
   * Throws on malformed input.
   */
  feed(chunk: Buffer, now: number): number {
    let data = chunk;
    let offset = 0;
    while (offset < data.length && this.state !== "done") {
      switch (this.state) {
        case "head": {
          const searchFrom = Math.max(0, this.head.length - 3);
          this.head =
            this.head.length === 0
              ? data.subarray(offset)
              : Buffer.concat([this.head, data.subarray(offset)]);
          const end = this.head.indexOf("\r\n\r\n", searchFrom);
          if (end < 0) {
            if (this.head.length > MAX_HEAD_BYTES) throw new Error("response head too large");
            offset = data.length;
            break;
          }
          this.parseHead(this.head.subarray(0, end).toString("latin1"));
          data = this.head.subarray(end + 4);
          offset = 0;
          this.head = Buffer.alloc(0);
          break;
        }
        case "length":
        case "chunk-data": {
          const take = Math.min(this.remaining, data.length - offset);
          this.onBody(data.subarray(offset, offset + take), now);
          this.remaining -= take;
          offset += take;
          if (this.remaining === 0) this.state = this.state === "length" ? "done" : "chunk-end";
          break;
        }
        case "until-close":
          this.onBody(data.subarray(offset), now);
          offset = data.length;
          break;
        case "chunk-size":
        case "chunk-end":
        case "trailers": {
          const byte = data[offset];
          offset += 1;
          if (byte !== 0x0a) {
            if (byte !== 0x0d) this.line += String.fromCharCode(byte);
            if (this.line.length > MAX_LINE_BYTES) throw new Error("chunk framing line too long");
            break;
          }
          this.endLine();
          break;
        }
      }
    }
    return this.state === "done" ? data.length - offset : 0;
  }

  /** The connection closed: completes a read-until-close body, else the response was cut short. */
  finishOnClose(): void {
    if (this.state === "until-close") this.state = "done";
    if (this.state !== "done") throw new Error(`connection closed mid-response (${this.state})`);
  }

  get response(): ParsedResponse {
    if (this.captured) this.result.body = Buffer.concat(this.captured).toString("utf8");
    return this.result;
  }

  private parseHead(text: string): void {
    const lines = text.split("\r\n");
    const status = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0] ?? "");
    if (!status) throw new Error(`bad status line: ${JSON.stringify(lines[0]?.slice(0, 80))}`);
    this.result.status = Number(status[2]);
    let contentLength: number | undefined;
    let chunked = false;
    let connection = status[1] === "0" ? "close" : "keep-alive";
    for (let index = 1; index < lines.length; index += 1) {
      const line = lines[index];
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === "content-length") contentLength = Number(value);
      else if (name === "transfer-encoding")
        chunked = value.split(",").some((item) => item.trim() === "chunked");
      else if (name === "connection") connection = value;
    }
    this.result.keepAlive = connection !== "close";
    if (this.result.status < 200) throw new Error(`unexpected interim response ${this.result.status}`);
    if (this.result.status === 204 || this.result.status === 304) this.state = "done";
    else if (chunked) this.state = "chunk-size";
    else if (contentLength !== undefined) {
      if (!Number.isSafeInteger(contentLength) || contentLength < 0) throw new Error("bad content-length");
      this.remaining = contentLength;
      this.state = contentLength === 0 ? "done" : "length";
    } else {
      this.result.keepAlive = false;
      this.state = "until-close";
    }
  }

  private endLine(): void {
    const line = this.line;
    this.line = "";
    if (this.state === "chunk-end") {
      if (line.length > 0) throw new Error("missing CRLF after chunk data");
      this.state = "chunk-size";
      return;
    }
    if (this.state === "trailers") {
      if (line.length === 0) this.state = "done";
      return;
    }
    const size = Number.parseInt(line.split(";")[0].trim(), 16);
    if (!Number.isSafeInteger(size) || size < 0)
      throw new Error(`bad chunk size line: ${JSON.stringify(line)}`);
    if (size === 0) this.state = "trailers";
    else {
      this.remaining = size;
      this.state = "chunk-data";
    }
  }

  private onBody(bytes: Buffer, now: number): void {
    if (bytes.length === 0) return;
    if (this.result.firstBodyAt === undefined) this.result.firstBodyAt = now;
    this.result.bodyBytes += bytes.length;
    this.captured?.push(Buffer.from(bytes));
  }
}
