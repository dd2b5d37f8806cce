/**
 * Minimal media files built in code for tests of what the gateway reads from them: image headers
 * with a given size, and PDFs with a given number of pages, plain or packed in an object stream.
 */
import { deflateSync } from "node:zlib";

/** A PNG signature and IHDR chunk (no pixels): enough for a header reader. */
export function createPngHeader(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(33);
  bytes.writeUInt32BE(0x89504e47, 0);
  bytes.writeUInt32BE(0x0d0a1a0a, 4);
  bytes.writeUInt32BE(13, 8);
  bytes.write("IHDR", 12, "latin1");
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}

export function createGifHeader(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(13);
  bytes.write("GIF89a", 0, "latin1");
  bytes.writeUInt16LE(width, 6);
  bytes.writeUInt16LE(height, 8);
  return bytes;
}

/** SOI, an APP0 segment to skip, then a baseline start-of-frame with the size. */
export function createJpegHeader(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.alloc(14)]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

export function createWebpLosslessHeader(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(30);
  bytes.write("RIFF", 0, "latin1");
  bytes.write("WEBP", 8, "latin1");
  bytes.write("VP8L", 12, "latin1");
  bytes[20] = 0x2f;
  bytes.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 21);
  return bytes;
}

/**
 * A PDF of `pages` pages. `packed`: the page dictionaries sit in a FlateDecode object stream, as
 * PDF 1.5+ writers put them, so none is visible in the file's own bytes. `padTo` pads the file
 * with a comment to that many bytes (documents near the body limit).
 */
export function createPdf(pages: number, options: { packed?: boolean; padTo?: number } = {}): Buffer {
  const kids = Array.from({ length: pages }, (_, index) => `${index + 3} 0 R`).join(" ");
  const pageObjects = Array.from(
    { length: pages },
    () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
  );
  let body = "%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n";
  if (options.packed) {
    const packed = deflateSync(
      Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>\n${pageObjects.join("\n")}`),
    );
    body += `${pages + 3} 0 obj\n<< /Type /ObjStm /N ${pages + 1} /First 0 /Filter /FlateDecode /Length ${packed.length} >>\nstream\n`;
    const head = Buffer.from(body, "latin1");
    const tail = Buffer.from("\nendstream\nendobj\n%%EOF\n", "latin1");
    return pad(Buffer.concat([head, packed, tail]), options.padTo);
  }
  body += `2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count ${pages} >>\nendobj\n`;
  pageObjects.forEach((page, index) => {
    body += `${index + 3} 0 obj\n${page}\nendobj\n`;
  });
  return pad(Buffer.from(`${body}%%EOF\n`, "latin1"), options.padTo);
}

function pad(pdf: Buffer, size: number | undefined): Buffer {
  if (size === undefined || size <= pdf.length) return pdf;
  const filler = Buffer.alloc(size - pdf.length, 0x20);
  filler[0] = 0x25; // "%": a comment line
  filler[filler.length - 1] = 0x0a;
  return Buffer.concat([pdf, filler]);
}
