/**
 * Recordings of what agent CLIs really send (test/fixtures/clients/): written by the client suite
 * when RECORD_CLIENT_FIXTURES=1, replayed through every provider kind by
 * test/conformance/client-requests.test.ts without the CLIs.
 *
 * What is kept: method, path, the request headers and the JSON body. What is removed: the key
 * (`authorization`, `x-api-key`) and the hop's `host` and `content-length`. The clients' own prose
 * (system prompts, tool descriptions, instructions: any string of 64 characters or more with a
 * space in it) is replaced by filler of the same length, so the shapes and sizes are the clients'
 * and their text is not copied here.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { CLIENT_RECORDINGS_DIR } from "./fixture-paths.js";
import type { BridgedExchange } from "./wire-bridge.js";

export interface ClientRecording {
  /** Which client and run: `claude-code 2.1.332, tool turn, request 2 of 3`. */
  origin: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: a client's wire body, read field by field.
  body: any;
}

const DROPPED_HEADERS = new Set(["authorization", "x-api-key", "host", "content-length", "connection"]);

export const recordingClientFixtures = process.env.RECORD_CLIENT_FIXTURES === "1";

function withoutProse(value: unknown): unknown {
  if (typeof value === "string") {
    if (value.length < 64 || !value.includes(" ")) return value;
    const label = `[client prose, ${value.length} characters]`;
    return label.length >= value.length ? value : label.padEnd(value.length, ".");
  }
  if (Array.isArray(value)) return value.map(withoutProse);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutProse(inner)]));
  }
  return value;
}

function keptHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (DROPPED_HEADERS.has(name) || value === undefined) continue;
    kept[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return kept;
}

/** Writes the JSON-bodied POSTs of a run as `<name>-<n>.json`. */
export function writeClientRecordings(
  name: string,
  origin: string,
  exchanges: readonly BridgedExchange[],
): void {
  const posts = exchanges.filter((exchange) => exchange.method === "POST" && exchange.requestBody !== "");
  posts.forEach((exchange, index) => {
    const recording: ClientRecording = {
      origin: `${origin}, request ${index + 1} of ${posts.length}`,
      method: exchange.method,
      path: exchange.path,
      headers: keptHeaders(exchange.requestHeaders),
      body: withoutProse(JSON.parse(exchange.requestBody)),
    };
    writeFileSync(
      join(CLIENT_RECORDINGS_DIR, `${name}-${index + 1}.json`),
      `${JSON.stringify(recording, null, 1)}\n`,
    );
  });
}

/** Every recording in test/fixtures/clients, by file name. */
export function readClientRecordings(): Array<{ file: string; recording: ClientRecording }> {
  return readdirSync(CLIENT_RECORDINGS_DIR)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({
      file,
      recording: JSON.parse(readFileSync(join(CLIENT_RECORDINGS_DIR, file), "utf8")) as ClientRecording,
    }));
}
