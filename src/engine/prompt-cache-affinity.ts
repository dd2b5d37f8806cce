/**
 * Prompt-cache affinity: a provider's prompt cache lives at one upstream deployment, so requests
 * that share a prompt prefix hit it only when they go to the same route. Among a model's routes,
 * the requests that share a cache key (OpenAI's `prompt_cache_key`) or, without one, the same
 * prompt prefix are put in one order by rendezvous hashing: every route is scored by a hash of the
 * affinity and its own key, highest first. The run tries them in that order and skips those whose
 * breaker is open, so the sticky route serves while it is healthy, a failure moves the request to
 * the next one in the same order (the same fallback for every request of that prefix), and adding
 * or removing a route moves only the prefixes that scored it highest (docs/providers.md,
 * "Prompt caching").
 *
 * A request with nothing worth caching (no key, no `cache_control` breakpoint, a prefix shorter
 * than providers cache) keeps the catalog order: stickiness buys nothing there.
 */
import { createHash } from "node:crypto";
import type { CanonicalMessage, CanonicalRequest, TextPart } from "../canonical/index.js";
import type { RouteCandidate } from "./route-candidates.js";

/**
 * How much of the prompt (characters of text, system first) the prefix hash reads. About 1,024
 * tokens of English: the least OpenAI caches automatically, and a bound on the work per request.
 */
export const PREFIX_CHARS = 4096;

/**
 * The request's cache affinity: its `prompt_cache_key`, else a hash of its prompt prefix when
 * the prompt is long enough to be cached or marks a breakpoint; undefined otherwise.
 */
export function findCacheAffinity(request: CanonicalRequest): string | undefined {
  const key = request.passthrough.prompt_cache_key;
  if (typeof key === "string" && key !== "") return `key:${key}`;
  const prefix = new PrefixReader();
  prefix.readParts(request.system);
  for (const message of request.messages) {
    if (prefix.full) break;
    prefix.readMessage(message);
  }
  if (!prefix.full && !prefix.breakpoint) return undefined;
  return `prefix:${prefix.digest()}`;
}

/**
 * The candidates with the leading model's routes (the requested model's) in rendezvous order for
 * `affinity`; the alternatives' routes the request named keep their place after them.
 */
export function orderByAffinity(candidates: readonly RouteCandidate[], affinity: string): RouteCandidate[] {
  const leading = candidates.filter((candidate) => candidate.model === candidates[0].model);
  const rest = candidates.slice(leading.length);
  if (leading.length < 2) return [...candidates];
  const scored = leading.map((candidate) => ({ candidate, score: scoreRoute(affinity, candidate.key) }));
  // Ties cannot reorder anything observable (equal 64-bit scores), but keep the sort total anyway.
  scored.sort((a, b) =>
    a.score === b.score ? a.candidate.key.localeCompare(b.candidate.key) : a.score > b.score ? -1 : 1,
  );
  return [...scored.map((entry) => entry.candidate), ...rest];
}

function scoreRoute(affinity: string, routeKey: string): bigint {
  return createHash("sha256").update(affinity).update("\u0000").update(routeKey).digest().readBigUInt64BE(0);
}

/** Reads the prompt's text in order up to PREFIX_CHARS; notes whether it saw a breakpoint. */
class PrefixReader {
  private readonly hash = createHash("sha256");
  private chars = 0;
  breakpoint = false;

  get full(): boolean {
    return this.chars >= PREFIX_CHARS;
  }

  readParts(parts: readonly TextPart[]): void {
    for (const part of parts) {
      if (part.cacheControl !== undefined) this.breakpoint = true;
      this.add(part.text);
    }
  }

  readMessage(message: CanonicalMessage): void {
    this.add(`\u0000${message.role}\u0000`);
    for (const part of message.content) {
      if (this.full) return;
      if ("cacheControl" in part && part.cacheControl !== undefined) this.breakpoint = true;
      if (part.type === "text") this.add(part.text);
      else if (part.type === "tool-call") this.add(`${part.name}${part.arguments}`);
      else if (part.type === "tool-result") {
        for (const inner of part.content) if (inner.type === "text") this.add(inner.text);
      } else if (part.type === "image" || part.type === "file") {
        const source = part.source;
        this.add(source.kind === "url" ? source.url : source.data.slice(0, PREFIX_CHARS));
      }
    }
  }

  digest(): string {
    return this.hash.digest("base64url");
  }

  private add(text: string): void {
    const room = PREFIX_CHARS - this.chars;
    if (room <= 0) return;
    const taken = text.length > room ? text.slice(0, room) : text;
    this.hash.update(taken);
    this.chars += taken.length;
  }
}
