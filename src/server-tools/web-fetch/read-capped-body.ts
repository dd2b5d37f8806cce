/**
 * Reads a response body into memory under a byte cap, decompressing gzip, deflate and brotli as it
 * streams. Both the bytes on the wire and the decoded bytes are counted, and the read stops as soon
 * as either passes the cap, so neither a huge body nor a small one that inflates to gigabytes (a
 * compression bomb) is ever held: memory stays within the cap plus one chunk.
 */
import { pipeline, type Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createUnzip } from "node:zlib";

export type CappedBody =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: "too_large" }
  | { ok: false; reason: "bad_encoding"; encoding: string };

export async function readCappedBody(
  body: Readable,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<CappedBody> {
  const encoding = (contentEncoding ?? "").trim().toLowerCase();
  let decoder: Transform | undefined;
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate") {
    decoder = createUnzip();
  } else if (encoding === "br") {
    decoder = createBrotliDecompress();
  } else if (encoding !== "" && encoding !== "identity") {
    discardBody(body);
    return { ok: false, reason: "bad_encoding", encoding };
  }
  const decoded: Readable = decoder ?? body;

  let wireBytes = 0;
  let overCap = false;
  if (decoder !== undefined) {
    body.on("data", (chunk: Buffer) => {
      wireBytes += chunk.length;
      if (wireBytes > maxBytes && !overCap) {
        overCap = true;
        decoded.destroy();
      }
    });
    // Either side's error (an aborted or reset body, a corrupt compressed stream) destroys both and
    // surfaces in the read loop below.
    pipeline(body, decoder, () => {});
  }

  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decoded) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > maxBytes) {
        overCap = true;
        break;
      }
      chunks.push(buffer);
    }
  } catch (error) {
    if (overCap) return { ok: false, reason: "too_large" };
    if (isZlibError(error)) return { ok: false, reason: "bad_encoding", encoding };
    throw error;
  } finally {
    discardBody(body);
    if (decoder !== undefined) discardBody(decoder);
  }
  if (overCap) return { ok: false, reason: "too_large" };
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}

/**
 * Stops reading a body that is not wanted (or no longer). undici reports the early end as an
 * `error` event, which is expected here and must not become an uncaught exception.
 */
export function discardBody(body: Readable): void {
  if (body.destroyed) return;
  body.on("error", () => undefined);
  body.destroy();
}

function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("Z_");
}
