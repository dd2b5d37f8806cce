/**
 * The spans of an answer that cite a server tool's sources. Models are told to cite pages by
 * linking them, so a citation is a markdown link `[label](url)` whose URL is one of the run's
 * sources; a link wrapped in parentheses, `([example.com](https://example.com/a))`, as OpenAI's
 * own search models write them, is cited whole. Linear in the text: a label is at most
 * MAX_LABEL_CHARS long, so each `[` is looked at a bounded number of times.
 */
import type { ServerToolResult, ServerToolSource, UrlCitation } from "../canonical/index.js";

const MAX_LABEL_CHARS = 300;
/** Anthropic cuts `cited_text` at this length; every format gets the same. */
const MAX_CITED_TEXT_CHARS = 150;
const LINK_PATTERN = new RegExp(
  `\\[([^\\]\\n]{1,${MAX_LABEL_CHARS}})\\]\\((https?://[^\\s)]{1,4096})\\)`,
  "g",
);

/** A source map's key for a URL: the URL without a trailing slash, so `…/a/` and `…/a` match. */
export function createSourceKey(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

export function findCitations(text: string, sources: ReadonlyMap<string, ServerToolSource>): UrlCitation[] {
  if (sources.size === 0 || !text.includes("](")) return [];
  const citations: UrlCitation[] = [];
  for (const match of text.matchAll(LINK_PATTERN)) {
    const source = sources.get(createSourceKey(match[2]));
    if (source === undefined) continue;
    let startIndex = match.index;
    let endIndex = startIndex + match[0].length;
    if (text[startIndex - 1] === "(" && text[endIndex] === ")") {
      startIndex -= 1;
      endIndex += 1;
    }
    citations.push({
      url: source.url,
      title: source.title,
      startIndex,
      endIndex,
      citedText: source.snippet.slice(0, MAX_CITED_TEXT_CHARS),
    });
  }
  return citations;
}

/** Adds what a gateway-run tool's result can be cited by (a search's results, a fetched page) to `sources`. */
export function collectSources(result: ServerToolResult, sources: Map<string, ServerToolSource>): void {
  const output = result.output;
  if (output === undefined) return;
  if (output.kind === "search") {
    for (const source of output.sources) sources.set(createSourceKey(source.url), source);
  } else if (output.kind === "fetch") {
    const source: ServerToolSource = {
      url: output.finalUrl,
      title: output.title,
      snippet: output.text.slice(0, 150),
      pageAge: null,
    };
    sources.set(createSourceKey(output.finalUrl), source);
    sources.set(createSourceKey(output.url), source);
  }
}
