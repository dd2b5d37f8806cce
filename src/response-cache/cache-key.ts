/**
 * The cache key of a request: a SHA-256 over its canonical form (model and alternatives, system,
 * messages, tools and tool choice, sampling and every other parameter that can change the answer),
 * never over its wire format, so a request cached from one format is answered in another. The
 * workspace is part of the key: nothing is shared across workspaces.
 *
 * Left out, because they do not change the answer: `stream` (a hit is replayed either way), the
 * end-user id and metadata, the ingress format of passthrough fields, the cache option itself,
 * and the request-field names (`param`) that decoders note for error messages.
 */
import { createHash, type Hash } from "node:crypto";
import type { CanonicalRequest } from "../canonical/index.js";

/** Top-level fields of the canonical request the key leaves out. */
const NOT_IN_KEY: ReadonlySet<string> = new Set([
  "stream",
  "user",
  "metadata",
  "passthroughFormat",
  "responseCacheTtlSeconds",
  "noItemReferences",
  "leftOut",
  "nativeServerTools",
  "passthrough",
]);

export function computeCacheKey(workspaceId: string, request: CanonicalRequest): string {
  const hash = createHash("sha256");
  hash.update(`v1\u0000${workspaceId}\u0000`);
  const fields = request as unknown as Record<string, unknown>;
  for (const name of Object.keys(fields).sort()) {
    if (NOT_IN_KEY.has(name) || fields[name] === undefined) continue;
    hash.update(`${name}=`);
    writeValue(hash, fields[name], true);
  }
  // The caller's unknown fields are theirs verbatim: `param` there is a field like any other.
  hash.update("passthrough=");
  writeValue(hash, request.passthrough, false);
  return hash.digest("base64url");
}

/** Writes `value` as JSON with object keys sorted, so two decoders' field orders hash alike. */
function writeValue(hash: Hash, value: unknown, skipParam: boolean): void {
  if (value === null || typeof value !== "object") {
    hash.update(value === undefined ? "null" : JSON.stringify(value));
    return;
  }
  if (Array.isArray(value)) {
    hash.update("[");
    for (const item of value) {
      writeValue(hash, item, skipParam);
      hash.update(",");
    }
    hash.update("]");
    return;
  }
  const record = value as Record<string, unknown>;
  hash.update("{");
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined || (skipParam && key === "param")) continue;
    hash.update(JSON.stringify(key));
    hash.update(":");
    writeValue(hash, record[key], skipParam);
    hash.update(",");
  }
  hash.update("}");
}
