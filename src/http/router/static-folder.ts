/**
 * Serves the files of one folder from memory: the web console's and the API reference's pages and
 * scripts, and the reference's renderer from its npm package. A request names a file; only names
 * found in the folder when it was first read are answered, so no path a caller sends (`..`,
 * encoded slashes, absolute paths) ever reaches the file system. Each file carries a strong ETag
 * (304 on a match) and, for text, a gzip copy made once.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

/** Extensions served, with their content type; files of other kinds are never served. */
const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg"]);
/** Below this, gzip saves less than its own header costs. */
const MIN_GZIP_BYTES = 1024;

interface StaticFile {
  body: Buffer;
  gzipped: Buffer | null;
  etag: string;
  gzippedEtag: string;
  contentType: string;
}

export interface StaticFolderOptions {
  /** Which files of the folder to serve (default: every file of a served kind). */
  names?: readonly string[];
  cacheControl: string;
  /** Text put in place of each key in the files' text (e.g. a version in a page's asset paths). */
  replacements?: Record<string, string>;
  /** Added to every answer of this folder (e.g. nosniff). */
  headers?: Record<string, string>;
}

export interface StaticFolder {
  /** The file's answer, or null when the folder has no such file. */
  serve(name: string, request: Request, extraHeaders?: Record<string, string>): Promise<Response | null>;
}

export function createStaticFolder(directory: string, options: StaticFolderOptions): StaticFolder {
  // Read on first use: most gateways never serve a page.
  let files: Promise<Map<string, StaticFile>> | undefined;

  async function load(): Promise<Map<string, StaticFile>> {
    const wanted = options.names ? new Set(options.names) : null;
    const entries = await readdir(directory, { withFileTypes: true });
    const loaded = new Map<string, StaticFile>();
    for (const entry of entries) {
      const extension = extname(entry.name);
      if (!entry.isFile() || !(extension in CONTENT_TYPES)) continue;
      if (wanted && !wanted.has(entry.name)) continue;
      const body = replaceText(await readFile(join(directory, entry.name)), options.replacements);
      const hash = createHash("sha256").update(body).digest("base64url").slice(0, 22);
      const gzipped =
        COMPRESSIBLE.has(extension) && body.length >= MIN_GZIP_BYTES ? await gzipAsync(body) : null;
      loaded.set(entry.name, {
        body,
        gzipped,
        etag: `"${hash}"`,
        gzippedEtag: `"${hash}-gz"`,
        contentType: CONTENT_TYPES[extension],
      });
    }
    for (const name of wanted ?? []) {
      if (!loaded.has(name)) throw new Error(`${join(directory, name)} is missing`);
    }
    return loaded;
  }

  return {
    async serve(name, request, extraHeaders = {}) {
      files ??= load().catch((error) => {
        files = undefined; // A later request tries again.
        throw error;
      });
      const file = (await files).get(name);
      if (!file) return null;
      const useGzip = file.gzipped !== null && acceptsGzip(request.headers.get("accept-encoding"));
      const etag = useGzip ? file.gzippedEtag : file.etag;
      const headers: Record<string, string> = {
        "Content-Type": file.contentType,
        "Cache-Control": options.cacheControl,
        ETag: etag,
        ...(file.gzipped ? { Vary: "Accept-Encoding" } : {}),
        ...options.headers,
        ...extraHeaders,
      };
      if (matchesEtag(request.headers.get("if-none-match"), etag)) {
        return new Response(null, { status: 304, headers });
      }
      const body = useGzip ? file.gzipped! : file.body;
      if (useGzip) headers["Content-Encoding"] = "gzip";
      headers["Content-Length"] = String(body.length);
      return new Response(request.method === "HEAD" ? null : new Uint8Array(body), { headers });
    },
  };
}

function replaceText(body: Buffer, replacements: Record<string, string> | undefined): Buffer {
  if (!replacements) return body;
  let text = body.toString("utf8");
  for (const [key, value] of Object.entries(replacements)) text = text.replaceAll(key, value);
  return Buffer.from(text, "utf8");
}

function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const refused = params.some((param) => /^\s*q=0(\.0*)?\s*$/.test(param));
    return (coding === "gzip" || coding === "*") && !refused;
  });
}

function matchesEtag(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === etag);
}
