/**
 * The text the model gets back as the web_search tool result: numbered results (title, URL, date,
 * snippet) within a character budget, or one sentence saying the search failed and why, in words
 * that reveal nothing of the gateway's configuration (the full message goes to logs and events).
 */
import type { SearchFailure, SearchFailureReason, SearchOutcome, SearchSuccess } from "./search-types.js";

export function renderSearchOutcomeForModel(outcome: SearchOutcome, maxChars: number): string {
  return outcome.ok ? renderResults(outcome, maxChars) : renderFailure(outcome);
}

function renderResults(outcome: SearchSuccess, maxChars: number): string {
  const { results } = outcome;
  if (results.length === 0) return `The web search for ${quote(outcome.query)} found no results.`;
  const header = `Web search results for ${quote(outcome.query)}:`;
  let text = header;
  let shown = 0;
  for (const [index, result] of results.entries()) {
    const lines = [`\n\n[${index + 1}] ${result.title}`, `URL: ${result.url}`];
    if (result.date !== null) lines.push(`Date: ${result.date}`);
    if (result.snippet !== "") lines.push(result.snippet);
    const block = lines.join("\n");
    // Always show the first result's title and URL, even past a tiny budget.
    if (shown > 0 && text.length + block.length > maxChars) break;
    text += block;
    shown += 1;
  }
  if (shown < results.length)
    text += `\n\n(${results.length - shown} more results left out to keep this short.)`;
  return text;
}

const FAILURE_WORDS: Record<Exclude<SearchFailureReason, "invalid_input" | "http_status">, string> = {
  not_configured: "web search is not configured on this gateway",
  timeout: "the search service did not answer in time",
  network: "the search service could not be reached",
  bad_response: "the search service sent an answer that could not be read",
  aborted: "the request was cancelled",
};

function renderFailure(failure: SearchFailure): string {
  const subject = `The web search for ${quote(failure.query)} failed`;
  if (failure.reason === "invalid_input") return `${subject}: ${failure.message} Nothing was searched.`;
  const why =
    failure.reason === "http_status"
      ? `the search service answered HTTP ${failure.status}${failure.status === 429 ? " (too many requests)" : ""}`
      : FAILURE_WORDS[failure.reason];
  return `${subject}: ${why}. No results are available from this search.`;
}

function quote(query: string): string {
  return JSON.stringify(query.length > 200 ? `${query.slice(0, 199)}…` : query);
}
