/**
 * A file part given by URL, fetched by the gateway through web_fetch's checked fetcher (address
 * rules before any connection, every redirect re-checked, one deadline) with the PDF byte cap.
 * Only a PDF is downloaded: a declared other type ends the fetch at its headers, and an untyped
 * body that does not start like a PDF is not one. Such a file stays a URL, for an upstream that
 * reads URLs itself (a video or an image at Gemini).
 */

import { hasPdfHeader } from "../pdf/index.js";
import {
  classifyMediaType,
  type FetchNetwork,
  fetchSafely,
  type SafeFetchSettings,
} from "../web-fetch/index.js";

export type FetchedFile =
  | { kind: "pdf"; bytes: Buffer; finalUrl: string }
  | { kind: "other" }
  /** `message`: one sentence for the caller, starting with `Refused:` or `Failed:`. */
  | { kind: "failed"; message: string };

export interface FileFetchContext {
  /** web_fetch's rules (ports, plain http, redirects, deadline, the loopback escape hatch for tests). */
  settings: SafeFetchSettings;
  network?: FetchNetwork;
}

/** Rejects only with the signal's reason once it aborts. */
export async function fetchFileUrl(
  url: string,
  maxFileBytes: number,
  context: FileFetchContext,
  signal: AbortSignal,
): Promise<FetchedFile> {
  const settings = { ...context.settings };
  settings.maxBytes = maxFileBytes;
  const fetched = await fetchSafely(url, {
    settings,
    signal,
    network: context.network,
    acceptContentType: (type) => {
      const kind = classifyMediaType(type.mediaType);
      return kind === "pdf" || kind === null;
    },
  });
  if (!fetched.ok) {
    if (fetched.reason === "unsupported_type") return { kind: "other" };
    if (fetched.reason === "too_large") {
      return {
        kind: "failed",
        message: `Failed: the file is larger than ${maxFileBytes} bytes, the most read.`,
      };
    }
    return { kind: "failed", message: fetched.message };
  }
  if (!hasPdfHeader(fetched.body)) return { kind: "other" };
  return { kind: "pdf", bytes: fetched.body, finalUrl: fetched.url };
}

/** The last path segment when it looks like a file name (`paper.pdf`), for the model's wrapper. */
export function filenameFromUrl(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const segment = path.slice(path.lastIndexOf("/") + 1);
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    name = segment;
  }
  return /\.[a-z0-9]{1,8}$/i.test(name) ? name : undefined;
}
