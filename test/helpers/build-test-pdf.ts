/**
 * A small PDF writer for tests: real, valid PDF 1.4 files built from scratch (no binary fixtures
 * in the repository). Pages carry text in the standard Helvetica font (a real text layer that
 * PDF.js extracts), an image with no text (what a scanned page looks like), or both. Optional
 * RC4 40-bit encryption with the standard security handler (revision 2), so a test can hand the
 * extractor a document that really needs a password.
 */
import { createHash } from "node:crypto";

export interface TestPdfPage {
  /** Lines of text drawn top to bottom; none: the page has no text layer. */
  lines?: string[];
  /** Draw a grey image over the page (a scanned page when there are no lines). */
  image?: boolean;
}

export interface TestPdfOptions {
  /** Encrypt with the standard security handler; an empty user password opens without asking. */
  encrypt?: { userPassword: string; ownerPassword: string };
  /** Add an unreferenced stream of this many bytes (makes a file large without more parsing work). */
  paddingBytes?: number;
}

const PASSWORD_PADDING = Buffer.from(
  "28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A",
  "hex",
);

export function buildTestPdf(pages: TestPdfPage[], options: TestPdfOptions = {}): Buffer {
  const objects: Array<{ dictionary: string; stream?: Buffer }> = [];
  const add = (dictionary: string, stream?: Buffer): number => {
    objects.push({ dictionary, stream });
    return objects.length;
  };
  const catalog = add(""); // filled in once the page tree exists
  const pageTree = add("");
  const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  const pageIds: number[] = [];
  for (const page of pages) {
    const resources: string[] = [`/Font << /F1 ${font} 0 R >>`];
    let content = "";
    if (page.image) {
      const pixels = Buffer.alloc(16 * 16, 0x80);
      const image = add(
        "<< /Type /XObject /Subtype /Image /Width 16 /Height 16 /ColorSpace /DeviceGray /BitsPerComponent 8",
        pixels,
      );
      resources.push(`/XObject << /Im1 ${image} 0 R >>`);
      content += "q 500 0 0 700 50 50 cm /Im1 Do Q\n";
    }
    if (page.lines && page.lines.length > 0) {
      content += "BT /F1 11 Tf 13 TL 50 760 Td\n";
      for (const line of page.lines) content += `(${escapePdfString(line)}) Tj T*\n`;
      content += "ET\n";
    }
    const contents = add("<<", Buffer.from(content, "latin1"));
    pageIds.push(
      add(
        `<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 612 792] /Resources << ${resources.join(" ")} >> /Contents ${contents} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1].dictionary = `<< /Type /Catalog /Pages ${pageTree} 0 R >>`;
  objects[pageTree - 1].dictionary =
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pageIds.length} >>`;
  if (options.paddingBytes) add("<<", Buffer.alloc(options.paddingBytes, 0x20));

  const fileId = createHash("md5").update(`test-pdf-${pages.length}`).digest();
  const security = options.encrypt ? createSecurityHandler(options.encrypt, fileId) : undefined;
  const encryptId = security ? add(security.dictionary) : undefined;

  const chunks: Buffer[] = [Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  let length = chunks[0].length;
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    const id = index + 1;
    offsets.push(length);
    let text: string;
    let body: Buffer | undefined;
    if (object.stream) {
      body = security && id !== encryptId ? security.encrypt(id, object.stream) : object.stream;
      text = `${id} 0 obj\n${object.dictionary} /Length ${body.length} >>\nstream\n`;
    } else {
      text = `${id} 0 obj\n${object.dictionary}\n`;
    }
    const parts: Buffer[] = [Buffer.from(text, "latin1")];
    if (body) parts.push(body, Buffer.from("\nendstream\n", "latin1"));
    parts.push(Buffer.from("endobj\n", "latin1"));
    for (const part of parts) {
      chunks.push(part);
      length += part.length;
    }
  });
  const xrefOffset = length;
  let trailer = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) trailer += `${String(offset).padStart(10, "0")} 00000 n \n`;
  const idHex = fileId.toString("hex");
  trailer += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R /ID [<${idHex}> <${idHex}>]`;
  if (encryptId) trailer += ` /Encrypt ${encryptId} 0 R`;
  trailer += ` >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  chunks.push(Buffer.from(trailer, "latin1"));
  return Buffer.concat(chunks);
}

/** `count` pages of `linesPerPage` lines each, every line naming its page: "page 3 line 7 …". */
export function buildTextPages(count: number, linesPerPage = 3, lineText = "lorem ipsum"): TestPdfPage[] {
  return Array.from({ length: count }, (_, pageIndex) => ({
    lines: Array.from(
      { length: linesPerPage },
      (_, lineIndex) => `page ${pageIndex + 1} line ${lineIndex + 1} ${lineText}`,
    ),
  }));
}

let heavyPdf: Buffer | undefined;

/**
 * One page whose content stream is about 4 MB of text: PDF.js reads it in a single synchronous
 * run of well over a second on the request thread (built once per process).
 */
export function buildHeavyTestPdf(): Buffer {
  heavyPdf ??= buildTestPdf([
    { lines: Array.from({ length: 45_000 }, (_, index) => `line ${index} ${"y".repeat(70)}`) },
  ]);
  return heavyPdf;
}

function escapePdfString(text: string): string {
  return text.replace(/[\\()]/g, (character) => `\\${character}`);
}

/** Standard security handler, V1 R2 (RC4, 40-bit key), all permissions granted. */
function createSecurityHandler(
  passwords: { userPassword: string; ownerPassword: string },
  fileId: Buffer,
): { dictionary: string; encrypt(objectId: number, data: Buffer): Buffer } {
  const permissions = -4; // every permission bit set
  const pad = (password: string) =>
    Buffer.concat([Buffer.from(password, "latin1"), PASSWORD_PADDING]).subarray(0, 32);
  const ownerKey = md5(pad(passwords.ownerPassword || passwords.userPassword)).subarray(0, 5);
  const ownerEntry = rc4(ownerKey, pad(passwords.userPassword));
  const permissionBytes = Buffer.alloc(4);
  permissionBytes.writeInt32LE(permissions);
  const fileKey = md5(
    Buffer.concat([pad(passwords.userPassword), ownerEntry, permissionBytes, fileId]),
  ).subarray(0, 5);
  const userEntry = rc4(fileKey, PASSWORD_PADDING);
  return {
    dictionary: `<< /Filter /Standard /V 1 /R 2 /O <${ownerEntry.toString("hex")}> /U <${userEntry.toString("hex")}> /P ${permissions} >>`,
    encrypt(objectId, data) {
      const objectKey = md5(
        Buffer.concat([
          fileKey,
          Buffer.from([objectId & 0xff, (objectId >> 8) & 0xff, objectId >> 16, 0, 0]),
        ]),
      ).subarray(0, 10);
      return rc4(objectKey, data);
    },
  };
}

function md5(data: Buffer): Buffer {
  return createHash("md5").update(data).digest();
}

function rc4(key: Buffer, data: Buffer): Buffer {
  const state = Array.from({ length: 256 }, (_, index) => index);
  let j = 0;
  for (let i = 0; i < 256; i++) {
    j = (j + state[i] + key[i % key.length]) & 0xff;
    [state[i], state[j]] = [state[j], state[i]];
  }
  const out = Buffer.alloc(data.length);
  let i = 0;
  j = 0;
  for (let index = 0; index < data.length; index++) {
    i = (i + 1) & 0xff;
    j = (j + state[i]) & 0xff;
    [state[i], state[j]] = [state[j], state[i]];
    out[index] = data[index] ^ state[(state[i] + state[j]) & 0xff];
  }
  return out;
}
