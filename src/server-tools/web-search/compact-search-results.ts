/**
 * The shared back half of every backend: raw results in the backend's own words become compact
 * {@link SearchResult}s — plain-text title and snippet, an absolute http(s) URL, a normalised date —
 * with the domain filters applied, duplicates dropped and the count and snippet length of the plan
 * enforced. Work per result is bounded: text is cut before it is cleaned.
 */
import { isUrlPermitted } from "./domain-filter.js";
import { normalizeSearchDate } from "./normalize-search-date.js";
import type { SearchPlan } from "./plan-search.js";
import type { SearchResult } from "./search-types.js";

/** A result as a backend gave it; every field is checked here, nothing is trusted. */
export interface RawSearchResult {
  title: unknown;
  url: unknown;
  /** Snippet pieces in order (Brave's description then its extra snippets); non-strings are skipped. */
  snippets: readonly unknown[];
  /** A machine date (ISO or RFC 1123), if the backend has one. */
  date?: unknown;
  /** The backend's human wording of the page's age ("2 days ago"), if it has one. */
  ageText?: unknown;
}

const MAX_TITLE_CHARS = 200;
const MAX_AGE_TEXT_CHARS = 64;
const MAX_URL_CHARS = 2048;
const SNIPPET_SEPARATOR = " … ";

export function compactSearchResults(
  raw: readonly RawSearchResult[],
  plan: SearchPlan,
  now: Date,
): SearchResult[] {
  const results: SearchResult[] = [];
  const seen = new Set<string>();
  for (const item of raw) {
    if (results.length >= plan.count) break;
    const url = parseResultUrl(item.url);
    if (url === null || seen.has(url.href)) continue;
    if (!isUrlPermitted(url, plan.allowedDomains, plan.blockedDomains)) continue;
    seen.add(url.href);
    const ageText = typeof item.ageText === "string" ? cleanText(item.ageText, MAX_AGE_TEXT_CHARS) : "";
    const date = normalizeSearchDate(item.date, now) ?? normalizeSearchDate(ageText, now);
    results.push({
      title: (typeof item.title === "string" ? cleanText(item.title, MAX_TITLE_CHARS) : "") || url.hostname,
      url: url.href,
      snippet: joinSnippets(item.snippets, plan.snippetChars),
      date,
      pageAge: ageText || date,
    });
  }
  return results;
}

function parseResultUrl(value: unknown): URL | null {
  if (typeof value !== "string" || value.length > MAX_URL_CHARS) return null;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url : null;
  } catch {
    return null;
  }
}

function joinSnippets(pieces: readonly unknown[], maxChars: number): string {
  let text = "";
  for (const piece of pieces) {
    if (typeof piece !== "string") continue;
    const remaining = maxChars - text.length;
    if (remaining <= SNIPPET_SEPARATOR.length) break;
    // Cleaning shortens text (markup, entities, runs of spaces); twice the room is plenty to fill it.
    const cleaned = cleanText(piece, remaining * 2);
    if (cleaned === "") continue;
    text = text === "" ? cleaned : `${text}${SNIPPET_SEPARATOR}${cleaned}`;
  }
  return truncateText(text, maxChars);
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  hellip: "…",
  mdash: "—",
  ndash: "–",
};

/** Plain text of a backend's snippet or title: tags dropped, entities decoded, whitespace collapsed. */
export function cleanText(value: string, maxInputChars: number): string {
  return value
    .slice(0, maxInputChars)
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, decodeEntity)
    .replace(/\p{Cc}/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

function decodeEntity(entity: string, body: string): string {
  if (body[0] === "#") {
    const code =
      body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      ? String.fromCodePoint(code)
      : entity;
  }
  return NAMED_ENTITIES[body.toLowerCase()] ?? entity;
}

/** Cuts at a word boundary near `maxChars` (never inside a surrogate pair) and marks the cut with `…`. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let cut = maxChars - 1;
  const space = text.lastIndexOf(" ", cut);
  if (space > maxChars * 0.8) cut = space;
  if (/[\ud800-\udbff]/.test(text[cut - 1] ?? "")) cut -= 1;
  return `${text.slice(0, cut).trimEnd()}…`;
}
