/**
 * A canonical url citation → the chat format's `url_citation` annotation. The format's offsets
 * index into the message's whole `content`, so the caller passes where the cited text block starts
 * in it. `end_index` stays exclusive, and `title` is always a string: clients that validate
 * annotations (e.g. with a schema requiring a string title) drop the whole chunk otherwise.
 */
import type { UrlCitation } from "../../canonical/index.js";

export interface ChatUrlCitationAnnotation {
  type: "url_citation";
  url_citation: { url: string; title: string; start_index: number; end_index: number };
}

export function encodeUrlCitation(citation: UrlCitation, contentOffset: number): ChatUrlCitationAnnotation {
  return {
    type: "url_citation",
    url_citation: {
      url: citation.url,
      title: citation.title,
      start_index: contentOffset + citation.startIndex,
      end_index: contentOffset + citation.endIndex,
    },
  };
}
