/**
 * Answers of the three providers that run web search themselves, written from their documented
 * wire formats, as JSON bodies and as the event streams their fakes send: one search for
 * "capital of france" finding two pages, then an answer that cites the first one. The same turn
 * in every shape, so a test can check what each ingress format makes of each provider's records.
 *
 * - Anthropic: `server_tool_use` (its input streamed as `input_json_delta`), a
 *   `web_search_tool_result` with two `web_search_result`s (encrypted content, page age), a text
 *   block citing the first page (`citations_delta` before its text), an uncited text block, and
 *   `usage.server_tool_use.web_search_requests`. Also a paused turn and its continuation.
 * - OpenAI Responses: a `web_search_call` item (`action: search` with its sources, as
 *   `include: ["web_search_call.action.sources"]` returns them) with its progress events, then a
 *   message whose text cites the first page with a `url_citation` annotation.
 * - Gemini: text chunks with an empty `groundingMetadata`, then the last chunk with the query, the
 *   two grounding chunks and a support whose segment is given in UTF-8 bytes of a text with
 *   multi-byte characters.
 */
import { readFileSync } from "node:fs";
import { buildUsage, FAKE_MESSAGE_ID, FAKE_MODEL } from "./fake-anthropic-upstream.js";
import { numberEvents, type ResponseEvent } from "./fake-openai-responses-upstream.js";
import { recordedPath } from "./fixture-paths.js";

export const SEARCH_QUERY = "capital of france";
export const FIRST_PAGE = { url: "https://example.com/france", title: "France - Example" };
export const SECOND_PAGE = { url: "https://example.org/paris", title: "Paris guide" };

/** What every provider's answer says; the first sentence cites FIRST_PAGE. */
export const CITED_SENTENCE = "Paris is the capital of France.";
export const UNCITED_SENTENCE = " It lies on the Seine.";

// ---------------------------------------------------------------- Anthropic

export const ANTHROPIC_TOOL_USE_ID = "srvtoolu_01NativeSearch000000000001";

function anthropicSearchResult(toolUseId: string): Record<string, unknown> {
  return {
    type: "web_search_tool_result",
    tool_use_id: toolUseId,
    content: [
      {
        type: "web_search_result",
        title: FIRST_PAGE.title,
        url: FIRST_PAGE.url,
        encrypted_content: "EqwBCioIBxgCIiRmaXJzdC1wYWdlLWVuY3J5cHRlZC1jb250ZW50LWZvci10ZXN0cw==",
        page_age: "2 days ago",
      },
      {
        type: "web_search_result",
        title: SECOND_PAGE.title,
        url: SECOND_PAGE.url,
        encrypted_content: "EqwBCioIBxgCIiRzZWNvbmQtcGFnZS1lbmNyeXB0ZWQtY29udGVudC1mb3ItdGVzdHM=",
        page_age: null,
      },
    ],
  };
}

const ANTHROPIC_CITATION = {
  type: "web_search_result_location",
  cited_text: "Paris is the capital and largest city of France. ",
  url: FIRST_PAGE.url,
  title: FIRST_PAGE.title,
  encrypted_index: "EpABCioIBxgCIiRjaXRhdGlvbi1pbmRleC1mb3ItdGVzdHM=",
};

/** The whole answer as Anthropic's non-streamed body. */
export function anthropicSearchMessage(): Record<string, unknown> {
  return {
    id: FAKE_MESSAGE_ID,
    type: "message",
    role: "assistant",
    model: FAKE_MODEL,
    content: [
      {
        type: "server_tool_use",
        id: ANTHROPIC_TOOL_USE_ID,
        name: "web_search",
        input: { query: SEARCH_QUERY },
      },
      anthropicSearchResult(ANTHROPIC_TOOL_USE_ID),
      { type: "text", text: CITED_SENTENCE, citations: [ANTHROPIC_CITATION] },
      { type: "text", text: UNCITED_SENTENCE },
    ],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: buildUsage({
      input_tokens: 2_000,
      output_tokens: 60,
      server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
    }),
  };
}

/** The same answer as Anthropic streams it (events; the fake frames them). */
export function anthropicSearchEvents(): Array<Record<string, unknown>> {
  return [
    messageStart(),
    ...serverToolUseEvents(0, ANTHROPIC_TOOL_USE_ID, ['{"query": ', `"${SEARCH_QUERY}"}`]),
    ...resultEvents(1, anthropicSearchResult(ANTHROPIC_TOOL_USE_ID)),
    ...citedTextEvents(2, [ANTHROPIC_CITATION], ["Paris is the capital", " of France."]),
    ...citedTextEvents(3, undefined, [UNCITED_SENTENCE]),
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: 2_000,
        output_tokens: 60,
        server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
      },
    },
    { type: "message_stop" },
  ];
}

export const PAUSED_TOOL_USE_ID = "srvtoolu_01NativeSearch000000000002";
export const PAUSED_QUERY = "seine length";

/**
 * A turn Anthropic paused: one search with its result, some text, then a second search it has not
 * run yet; `stop_reason: pause_turn`.
 */
export function anthropicPausedEvents(): Array<Record<string, unknown>> {
  return [
    messageStart(),
    ...serverToolUseEvents(0, ANTHROPIC_TOOL_USE_ID, [`{"query": "${SEARCH_QUERY}"}`]),
    ...resultEvents(1, anthropicSearchResult(ANTHROPIC_TOOL_USE_ID)),
    ...citedTextEvents(2, undefined, ["Let me check one more thing."]),
    ...serverToolUseEvents(3, PAUSED_TOOL_USE_ID, [`{"query": "${PAUSED_QUERY}"}`]),
    {
      type: "message_delta",
      delta: { stop_reason: "pause_turn", stop_sequence: null },
      usage: {
        input_tokens: 3_000,
        output_tokens: 40,
        server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
      },
    },
    { type: "message_stop" },
  ];
}

/** The continuation of the paused turn: the pending search's result first, then the cited answer. */
export function anthropicResumedEvents(): Array<Record<string, unknown>> {
  return [
    messageStart(),
    ...resultEvents(0, anthropicSearchResult(PAUSED_TOOL_USE_ID)),
    ...citedTextEvents(1, [ANTHROPIC_CITATION], [CITED_SENTENCE]),
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: 4_000,
        output_tokens: 30,
        server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
      },
    },
    { type: "message_stop" },
  ];
}

/** The paused turn and its continuation as non-streamed bodies. */
export function anthropicPausedMessage(): Record<string, unknown> {
  return {
    ...anthropicSearchMessage(),
    content: anthropicPausedBlocks(),
    stop_reason: "pause_turn",
    usage: buildUsage({
      input_tokens: 3_000,
      output_tokens: 40,
      server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
    }),
  };
}

export function anthropicResumedMessage(): Record<string, unknown> {
  return {
    ...anthropicSearchMessage(),
    content: [
      anthropicSearchResult(PAUSED_TOOL_USE_ID),
      { type: "text", text: CITED_SENTENCE, citations: [ANTHROPIC_CITATION] },
    ],
    usage: buildUsage({
      input_tokens: 4_000,
      output_tokens: 30,
      server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
    }),
  };
}

/** The blocks of the paused turn, as the continuation request must carry them back. */
export function anthropicPausedBlocks(): Array<Record<string, unknown>> {
  return [
    {
      type: "server_tool_use",
      id: ANTHROPIC_TOOL_USE_ID,
      name: "web_search",
      input: { query: SEARCH_QUERY },
    },
    anthropicSearchResult(ANTHROPIC_TOOL_USE_ID),
    { type: "text", text: "Let me check one more thing." },
    { type: "server_tool_use", id: PAUSED_TOOL_USE_ID, name: "web_search", input: { query: PAUSED_QUERY } },
  ];
}

function messageStart(): Record<string, unknown> {
  return {
    type: "message_start",
    message: {
      id: FAKE_MESSAGE_ID,
      type: "message",
      role: "assistant",
      model: FAKE_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: buildUsage({ input_tokens: 500, output_tokens: 1 }),
    },
  };
}

function serverToolUseEvents(index: number, id: string, fragments: string[]): Array<Record<string, unknown>> {
  return [
    {
      type: "content_block_start",
      index,
      content_block: { type: "server_tool_use", id, name: "web_search", input: {} },
    },
    { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } },
    ...fragments.map((partial_json) => ({
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json },
    })),
    { type: "content_block_stop", index },
  ];
}

function resultEvents(index: number, block: Record<string, unknown>): Array<Record<string, unknown>> {
  return [
    { type: "content_block_start", index, content_block: block },
    { type: "content_block_stop", index },
  ];
}

/** A text block: `citations: []` at start when cited, each citation before the text it cites. */
function citedTextEvents(
  index: number,
  citations: Array<Record<string, unknown>> | undefined,
  pieces: string[],
): Array<Record<string, unknown>> {
  return [
    {
      type: "content_block_start",
      index,
      content_block:
        citations === undefined ? { type: "text", text: "" } : { citations: [], type: "text", text: "" },
    },
    ...(citations ?? []).map((citation) => ({
      type: "content_block_delta",
      index,
      delta: { type: "citations_delta", citation },
    })),
    ...pieces.map((text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index },
  ];
}

// ---------------------------------------------------------------- OpenAI Responses

export const OPENAI_SEARCH_ITEM_ID = "ws_0b1native0search0item0000000000000000000000000001";
const OPENAI_MESSAGE_ID = "msg_0b1native0search0message000000000000000000000001";
const OPENAI_RESPONSE_ID = "resp_0b1native0search0response00000000000000000000001";
const OPENAI_MODEL = "gpt-5-2025-08-07";

/** OpenAI's text cites with an inline link, which its annotation spans. */
export const OPENAI_ANSWER = `${CITED_SENTENCE} ([example.com](${FIRST_PAGE.url}))${UNCITED_SENTENCE}`;
const OPENAI_CITED_SPAN = `([example.com](${FIRST_PAGE.url}))`;

function openAiSearchItem(): Record<string, unknown> {
  return {
    id: OPENAI_SEARCH_ITEM_ID,
    type: "web_search_call",
    status: "completed",
    action: {
      type: "search",
      query: SEARCH_QUERY,
      sources: [
        { type: "url", url: FIRST_PAGE.url },
        { type: "url", url: SECOND_PAGE.url },
      ],
    },
  };
}

function openAiAnnotation(): Record<string, unknown> {
  const start = OPENAI_ANSWER.indexOf(OPENAI_CITED_SPAN);
  return {
    type: "url_citation",
    end_index: start + OPENAI_CITED_SPAN.length,
    start_index: start,
    title: FIRST_PAGE.title,
    url: FIRST_PAGE.url,
  };
}

function openAiMessageItem(): Record<string, unknown> {
  return {
    id: OPENAI_MESSAGE_ID,
    type: "message",
    status: "completed",
    content: [{ type: "output_text", annotations: [openAiAnnotation()], logprobs: [], text: OPENAI_ANSWER }],
    role: "assistant",
  };
}

const OPENAI_USAGE = {
  input_tokens: 2_500,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 80,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 2_580,
};

/** The whole response as OpenAI's non-streamed body. */
export function openAiSearchResponse(): Record<string, unknown> {
  return {
    id: OPENAI_RESPONSE_ID,
    object: "response",
    created_at: 1_764_964_102,
    status: "completed",
    error: null,
    incomplete_details: null,
    model: OPENAI_MODEL,
    output: [openAiSearchItem(), openAiMessageItem()],
    usage: OPENAI_USAGE,
  };
}

/** The same response as OpenAI streams it, numbered. */
export function openAiSearchEvents(): ResponseEvent[] {
  const inProgress = { ...openAiSearchResponse(), status: "in_progress", output: [], usage: null };
  const cut = OPENAI_ANSWER.indexOf(OPENAI_CITED_SPAN) + OPENAI_CITED_SPAN.length;
  const message = {
    id: OPENAI_MESSAGE_ID,
    type: "message",
    status: "in_progress",
    content: [],
    role: "assistant",
  };
  const part = { type: "output_text", annotations: [], logprobs: [], text: "" };
  const at = { item_id: OPENAI_MESSAGE_ID, output_index: 1, content_index: 0 };
  return numberEvents([
    { type: "response.created", response: inProgress },
    { type: "response.in_progress", response: inProgress },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id: OPENAI_SEARCH_ITEM_ID, type: "web_search_call", status: "in_progress" },
    },
    { type: "response.web_search_call.in_progress", output_index: 0, item_id: OPENAI_SEARCH_ITEM_ID },
    { type: "response.web_search_call.searching", output_index: 0, item_id: OPENAI_SEARCH_ITEM_ID },
    { type: "response.web_search_call.completed", output_index: 0, item_id: OPENAI_SEARCH_ITEM_ID },
    { type: "response.output_item.done", output_index: 0, item: openAiSearchItem() },
    { type: "response.output_item.added", output_index: 1, item: message },
    { type: "response.content_part.added", ...at, part },
    { type: "response.output_text.delta", ...at, delta: OPENAI_ANSWER.slice(0, cut), logprobs: [] },
    {
      type: "response.output_text.annotation.added",
      ...at,
      annotation_index: 0,
      annotation: openAiAnnotation(),
    },
    { type: "response.output_text.delta", ...at, delta: OPENAI_ANSWER.slice(cut), logprobs: [] },
    { type: "response.output_text.done", ...at, text: OPENAI_ANSWER, logprobs: [] },
    {
      type: "response.content_part.done",
      ...at,
      part: { ...part, text: OPENAI_ANSWER, annotations: [openAiAnnotation()] },
    },
    { type: "response.output_item.done", output_index: 1, item: openAiMessageItem() },
    { type: "response.completed", response: openAiSearchResponse() },
  ]);
}

// ---------------------------------------------------------------- Gemini

/** Gemini's answer; "°" and "é" make UTF-8 offsets differ from UTF-16 ones. */
export const GEMINI_ANSWER = `Today it is 21°C in Paris, the capital of France. Café terraces are open.`;
export const GEMINI_CITED = "the capital of France.";
const GEMINI_REDIRECT_1 = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQFirst";
const GEMINI_REDIRECT_2 = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQSecond";
export const GEMINI_SOURCES = [
  { url: GEMINI_REDIRECT_1, title: "example.com" },
  { url: GEMINI_REDIRECT_2, title: "example.org" },
];

function geminiGrounding(): Record<string, unknown> {
  const bytes = (text: string) => Buffer.byteLength(text, "utf8");
  const start = bytes(GEMINI_ANSWER.slice(0, GEMINI_ANSWER.indexOf(GEMINI_CITED)));
  return {
    searchEntryPoint: { renderedContent: '<div class="container">capital of france</div>' },
    groundingChunks: GEMINI_SOURCES.map(({ url, title }) => ({ web: { uri: url, title } })),
    groundingSupports: [
      {
        segment: { startIndex: start, endIndex: start + bytes(GEMINI_CITED), text: GEMINI_CITED },
        groundingChunkIndices: [0, 1],
      },
    ],
    webSearchQueries: [SEARCH_QUERY],
  };
}

const GEMINI_USAGE = {
  promptTokenCount: 20,
  candidatesTokenCount: 30,
  toolUsePromptTokenCount: 100,
  totalTokenCount: 150,
};

/** The answer as Gemini streams it: text chunks, grounding on the last one with the finish reason. */
export function geminiSearchChunks(): Array<Record<string, unknown>> {
  const cut = GEMINI_ANSWER.indexOf("Café");
  const chunk = (text: string, last: boolean) => ({
    candidates: [
      {
        content: { parts: [{ text }], role: "model" },
        ...(last ? { finishReason: "STOP" } : {}),
        index: 0,
        groundingMetadata: last ? geminiGrounding() : {},
      },
    ],
    usageMetadata: GEMINI_USAGE,
    modelVersion: "gemini-2.5-flash",
    responseId: "bmF0aXZlU2VhcmNoUmVzcG9uc2U",
  });
  return [chunk(GEMINI_ANSWER.slice(0, cut), false), chunk(GEMINI_ANSWER.slice(cut), true)];
}

/** The answer as Gemini's non-streamed body. */
export function geminiSearchResponse(): Record<string, unknown> {
  return {
    candidates: [
      {
        content: { parts: [{ text: GEMINI_ANSWER }], role: "model" },
        finishReason: "STOP",
        index: 0,
        groundingMetadata: geminiGrounding(),
      },
    ],
    usageMetadata: GEMINI_USAGE,
    modelVersion: "gemini-2.5-flash",
    responseId: "bmF0aXZlU2VhcmNoUmVzcG9uc2U",
  };
}

// ---------------------------------------------------------------- recordings

/** A recorded body from `test/fixtures/recorded` (real traffic of the providers' own tools). */
export function readRecordedFixture(path: string): Buffer {
  return readFileSync(recordedPath(path));
}
