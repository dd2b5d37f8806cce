/**
 * A scriptable loopback server that speaks the wire formats of the three web-search backends:
 * SearXNG (`GET /search?format=json`), Brave Search (`GET /res/v1/web/search`) and Tavily
 * (`POST /search`). For tests of the backends themselves and of anything that runs web_search.
 *
 * Usage:
 * ```ts
 * const fake = await startFakeSearchBackend();
 * // backend config: { kind: "brave", base_url: fake.baseUrl, ... }
 * fake.enqueue(searchReply.json(buildBraveResponse("q", [hit])));   // next request
 * fake.enqueue(searchReply.status(429, { detail: { error: "slow down" } }));
 * ... exercise the code ...
 * assert.equal(fake.requests[0].query.q, "q");
 * await fake.close();
 * ```
 *
 * Replies are consumed in order, one per request. With an empty queue the server answers like the
 * real backend would for the request's path and method (SearXNG for `GET /search`, Tavily for
 * `POST /search`, Brave for `/res/v1/web/search`) with {@link DEFAULT_HITS}. Every request is
 * recorded before it is answered. Only 127.0.0.1 is bound; the port is chosen by the OS.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedSearchRequest {
  method: string;
  /** The path without the query string. */
  pathname: string;
  /** The query string's parameters (last value wins). */
  query: Record<string, string>;
  /** Lowercased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields from it.
  body: any;
  rawBody: string;
}

export type FakeSearchReply =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "raw"; status: number; body: string | Buffer; headers?: Record<string, string> }
  /** Reads the request and never answers. */
  | { kind: "hang" }
  /** Sends headers and a first piece of body, then stops writing without ending. */
  | { kind: "stallBody"; firstBytes: string }
  /** Streams `bytes` bytes of JSON-looking filler without a Content-Length. */
  | { kind: "endless"; bytes: number };

export const searchReply = {
  json: (body: unknown, headers?: Record<string, string>): FakeSearchReply => ({
    kind: "json",
    status: 200,
    body,
    headers,
  }),
  /** An error (or any) status; a string body is sent as text, anything else as JSON. */
  status: (status: number, body: unknown, headers?: Record<string, string>): FakeSearchReply =>
    typeof body === "string" || Buffer.isBuffer(body)
      ? { kind: "raw", status, body, headers }
      : { kind: "json", status, body, headers },
  raw: (body: string | Buffer, status = 200, headers?: Record<string, string>): FakeSearchReply => ({
    kind: "raw",
    status,
    body,
    headers,
  }),
  hang: (): FakeSearchReply => ({ kind: "hang" }),
  stallBody: (firstBytes = '{"results": ['): FakeSearchReply => ({ kind: "stallBody", firstBytes }),
  endless: (bytes: number): FakeSearchReply => ({ kind: "endless", bytes }),
};

/** One result, written once and rendered in each backend's own shape by the builders below. */
export interface FakeSearchHit {
  title: string;
  url: string;
  snippet: string;
  /** SearXNG `publishedDate`, Brave `page_age`, Tavily `published_date` (each backend's own format). */
  date?: string | null;
  /** Brave's human `age` ("2 days ago"). */
  age?: string;
  /** Brave's `extra_snippets`. */
  extraSnippets?: string[];
}

export const DEFAULT_HITS: FakeSearchHit[] = [
  {
    title: "Paris - Wikipedia",
    url: "https://en.wikipedia.org/wiki/Paris",
    snippet: "Paris is the capital and largest city of France.",
    date: "2025-11-02T08:00:00",
  },
  {
    title: "Paris | History, Map, Population",
    url: "https://www.britannica.com/place/Paris",
    snippet: "Paris, city and capital of France, located along the Seine River.",
  },
  {
    title: "Visit Paris",
    url: "https://parisjetaime.com/eng/",
    snippet: "The official website of the Paris tourist office.",
  },
];

/** SearXNG's JSON output (`webutils.py` `get_json_response`; result fields of `result_types/_base.py`). */
export function buildSearxngResponse(query: string, hits: FakeSearchHit[] = DEFAULT_HITS): unknown {
  return {
    query,
    number_of_results: 0,
    results: hits.map((hit, index) => {
      const url = new URL(hit.url);
      return {
        url: hit.url,
        title: hit.title,
        content: hit.snippet,
        publishedDate: hit.date ?? null,
        thumbnail: "",
        engine: "duckduckgo",
        template: "default.html",
        parsed_url: [url.protocol.slice(0, -1), url.host, url.pathname, "", url.search.slice(1), ""],
        img_src: "",
        priority: "",
        engines: ["duckduckgo", "brave"],
        positions: [index + 1],
        score: 4 / (index + 1),
        category: "general",
      };
    }),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [`${query} history`],
    unresponsive_engines: [["wikidata", "timeout"]],
  };
}

/** Brave's `WebSearchApiResponse` with a `web` section (omitted when `hits` is null). */
export function buildBraveResponse(query: string, hits: FakeSearchHit[] | null = DEFAULT_HITS): unknown {
  const response: Record<string, unknown> = {
    type: "search",
    query: {
      original: query,
      show_strict_warning: false,
      is_navigational: false,
      is_news_breaking: false,
      spellcheck_off: true,
      country: "us",
      bad_results: false,
      should_fallback: false,
      postal_code: "",
      city: "",
      header_country: "",
      more_results_available: true,
      state: "",
    },
    mixed: { type: "mixed", main: [], top: [], side: [] },
  };
  if (hits !== null) {
    response.web = {
      type: "search",
      results: hits.map((hit) => {
        const url = new URL(hit.url);
        const result: Record<string, unknown> = {
          title: hit.title,
          url: hit.url,
          is_source_local: false,
          is_source_both: false,
          description: hit.snippet,
          profile: { name: url.hostname, url: hit.url, long_name: url.hostname, img: "" },
          language: "en",
          family_friendly: true,
          type: "search_result",
          subtype: "generic",
          is_live: false,
          meta_url: {
            scheme: "https",
            netloc: url.host,
            hostname: url.hostname,
            favicon: "",
            path: url.pathname,
          },
        };
        if (hit.date !== undefined && hit.date !== null) result.page_age = hit.date;
        if (hit.age !== undefined) result.age = hit.age;
        if (hit.extraSnippets !== undefined) result.extra_snippets = hit.extraSnippets;
        return result;
      }),
      family_friendly: true,
    };
  }
  return response;
}

/** Tavily's `/search` answer (tavily-js `src/search.ts` reads these fields). */
export function buildTavilyResponse(query: string, hits: FakeSearchHit[] = DEFAULT_HITS): unknown {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: hits.map((hit, index) => ({
      url: hit.url,
      title: hit.title,
      content: hit.snippet,
      score: 0.9 - index * 0.1,
      raw_content: null,
      ...(hit.date === undefined || hit.date === null ? {} : { published_date: hit.date }),
    })),
    response_time: 0.87,
    request_id: "123e4567-e89b-12d3-a456-426614174111",
  };
}

/** Asserts a search succeeded (showing the failure's message otherwise) and narrows its type. */
export function expectSearchSuccess<Outcome extends { ok: boolean; message?: string }>(
  outcome: Outcome,
): Extract<Outcome, { ok: true }> {
  assert.equal(outcome.ok, true, outcome.message);
  return outcome as Extract<Outcome, { ok: true }>;
}

export interface FakeSearchBackend {
  /** `http://127.0.0.1:<port>`: use as a backend's `base_url`. */
  readonly baseUrl: string;
  readonly requests: RecordedSearchRequest[];
  enqueue(...replies: FakeSearchReply[]): void;
  /** Resolves once no reply is left unfinished with its connection open (stalled calls were torn down). */
  waitForNoOpenReplies(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeSearchBackend(): Promise<FakeSearchBackend> {
  const queue: FakeSearchReply[] = [];
  const requests: RecordedSearchRequest[] = [];
  const sockets = new Set<Socket>();
  let openReplies = 0;

  const server = createServer(async (request, response) => {
    openReplies += 1;
    response.on("close", () => {
      openReplies -= 1;
    });
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    const url = new URL(request.url ?? "/", "http://fake");
    const recorded: RecordedSearchRequest = {
      method: request.method ?? "",
      pathname: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body: parseJson(rawBody),
      rawBody,
    };
    requests.push(recorded);
    writeReply(queue.shift() ?? defaultReply(recorded), response);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    waitForNoOpenReplies: async (timeoutMs = 2000) => {
      const deadline = Date.now() + timeoutMs;
      while (openReplies > 0) {
        if (Date.now() > deadline) throw new Error(`${openReplies} replies still open`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closing;
    },
  };
}

function defaultReply(request: RecordedSearchRequest): FakeSearchReply {
  if (request.pathname.endsWith("/res/v1/web/search")) {
    return searchReply.json(buildBraveResponse(request.query.q ?? ""));
  }
  if (request.pathname.endsWith("/search") && request.method === "POST") {
    return searchReply.json(buildTavilyResponse(request.body?.query ?? ""));
  }
  if (request.pathname.endsWith("/search"))
    return searchReply.json(buildSearxngResponse(request.query.q ?? ""));
  return searchReply.status(404, { error: "not found" });
}

function writeReply(reply: FakeSearchReply, response: ServerResponse): void {
  switch (reply.kind) {
    case "json": {
      const body = JSON.stringify(reply.body);
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      response.end(body);
      return;
    }
    case "raw":
      response.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers });
      response.end(reply.body);
      return;
    case "hang":
      return;
    case "stallBody":
      response.writeHead(200, { "content-type": "application/json" });
      response.write(reply.firstBytes);
      return;
    case "endless": {
      response.writeHead(200, { "content-type": "application/json" });
      const piece = Buffer.alloc(64 * 1024, "a");
      let left = reply.bytes;
      const pump = () => {
        while (left > 0) {
          const size = Math.min(left, piece.length);
          left -= size;
          if (!response.write(piece.subarray(0, size))) {
            response.once("drain", pump);
            return;
          }
        }
        response.end();
      };
      response.on("error", () => undefined);
      pump();
      return;
    }
  }
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
