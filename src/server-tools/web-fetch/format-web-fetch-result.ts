/**
 * The text the model reads as the result of a web_fetch call. Failures carry only their message
 * (never `detail`, which may name an internal range or error code).
 */
import type { WebFetchResult } from "./execute-web-fetch.js";

export function formatWebFetchResultForModel(result: WebFetchResult): string {
  if (!result.ok) return `web_fetch of ${result.url}: ${result.message}`;
  const header = [`URL: ${result.finalUrl}`];
  if (result.title) header.push(`Title: ${result.title}`);
  header.push(`Content type: ${result.contentType}`);
  let body: string;
  if (result.kind === "pdf" && result.text === "") {
    // The fetch itself reads no PDF: the text comes from the pdf tool's reader when it is there.
    body = `[A PDF document of ${result.bytesFetched} bytes; its text was not read.]`;
  } else if (result.text.trim() === "") {
    body = "[The page has no readable text; it may need JavaScript to show its content.]";
  } else {
    body = result.text;
  }
  return `${header.join("\n")}\n\n${body}`;
}
