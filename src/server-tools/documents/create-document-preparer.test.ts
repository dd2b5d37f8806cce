import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import {
  type Canary,
  createTripwireNetwork,
  PUBLIC_TEST_IPV4,
  startCanary,
} from "../../../test/helpers/fetch-tripwire.js";
import type { CanonicalRequest, FilePart, UserContentPart } from "../../canonical/index.js";
import type { DocumentSession } from "../../engine/ports.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { createPdfTextExtractor, pdfToolConfigSchema, resolvePdfToolSettings } from "../pdf/index.js";
import { defaultWebFetchSettings } from "../web-fetch/index.js";
import { createDocumentPreparer, MAX_DOCUMENTS_READ } from "./create-document-preparer.js";

const extractors: Array<{ close(): Promise<void> }> = [];
const canaries: Canary[] = [];
after(async () => {
  await Promise.all(extractors.map((extractor) => extractor.close()));
  await Promise.all(canaries.map((canary) => canary.close()));
});

const REPORT = buildTestPdf([{ lines: ["Revenue grew 12 %"] }, { lines: ["Costs fell"] }]);
const SCAN = buildTestPdf([{ image: true }]);
const LOCKED = buildTestPdf(buildTextPages(1), {
  encrypt: { userPassword: "secret", ownerPassword: "owner" },
});

async function setUp(config: Record<string, unknown> = {}) {
  const extractor = createPdfTextExtractor(resolvePdfToolSettings(pdfToolConfigSchema.parse(config)));
  extractors.push(extractor);
  const canary = await startCanary();
  canaries.push(canary);
  const network = createTripwireNetwork({
    dns: { "public.test": [PUBLIC_TEST_IPV4], "intranet.test": ["10.0.0.5"] },
    routes: { [`${PUBLIC_TEST_IPV4}:80`]: canary.port },
  });
  const preparer = createDocumentPreparer({
    extractor,
    settings: { ...defaultWebFetchSettings(), timeoutMs: 5_000 },
    network,
  });
  return { extractor, canary, network, preparer };
}

function pdfPart(bytes: Buffer, index: number, extra: Partial<FilePart> = {}): FilePart {
  return {
    type: "file",
    source: { kind: "base64", mediaType: "application/pdf", data: bytes.toString("base64") },
    param: `messages[0].content[${index}]`,
    ...extra,
  };
}

function urlPart(url: string, index: number): FilePart {
  return { type: "file", source: { kind: "url", url }, param: `messages[0].content[${index}]` };
}

function request(
  content: UserContentPart[],
  serverTools: CanonicalRequest["serverTools"] = [],
): CanonicalRequest {
  return {
    model: "a/b",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "Summarise." }, ...content] }],
    tools: [],
    sampling: {},
    serverTools,
    toolEvents: false,
    stream: false,
    passthrough: {},
  };
}

function prepared(session: DocumentSession | undefined): DocumentSession {
  assert.ok(session, "the request has documents");
  return session;
}

const signal = () => new AbortController().signal;

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => assert.fail("expected a refusal"),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof GatewayError, String(error));
  return error;
}

describe("documents for each route", () => {
  test("a route that cannot read PDFs gets the text with the name and page markers; one that can gets the file", async () => {
    const { preparer } = await setUp({ price_per_page_usd: "0.002" });
    const part = pdfPart(REPORT, 1, { filename: "q3.pdf", cacheControl: { type: "ephemeral" } });
    const original = request([part]);
    const session = prepared(preparer.prepare(original));

    const asText = await session.requestFor(original, false, signal());
    assert.deepEqual(asText.request.messages[0].content, [
      { type: "text", text: "Summarise." },
      {
        type: "text",
        text: [
          '<file name="q3.pdf" pages="2">',
          "--- page 1 ---",
          "Revenue grew 12 %",
          "",
          "--- page 2 ---",
          "Costs fell",
          "</file>",
        ].join("\n"),
        cacheControl: { type: "ephemeral" },
      },
    ]);
    assert.equal(asText.costMicroUsd, 4_000);
    // The caller's request is left as it was: another route may need the file.
    assert.equal(original.messages[0].content[1], part);

    const asFile = await session.requestFor(original, true, signal());
    assert.equal(asFile.request, original);
    assert.equal(asFile.costMicroUsd, 0);
  });

  test("the text engine sends text to every route; the activation's page cap applies", async () => {
    const { preparer } = await setUp();
    const original = request(
      [pdfPart(REPORT, 1)],
      [
        {
          id: "pdf",
          maxUses: 1000,
          events: false,
          parameters: { engine: "text", max_pages: 1 },
          param: "plugins[0]",
        },
      ],
    );
    const session = prepared(preparer.prepare(original));
    assert.equal(session.sendsText(true), true);
    const read = await session.requestFor(original, true, signal());
    const text = (read.request.messages[0].content[1] as { text: string }).text;
    assert.match(text, /^<file name="document\.pdf" pages="2">\n--- page 1 ---\nRevenue grew 12 %\n/);
    assert.match(text, /\[page 2 not included: at most 1 page is read\]\n<\/file>$/);
    // The default engine: text only where the route cannot read PDFs.
    const plain = prepared(preparer.prepare(request([pdfPart(REPORT, 1)])));
    assert.equal(plain.sendsText(true), false);
    assert.equal(plain.sendsText(false), true);
  });

  test("each document is read once per request, and the next request with the same bytes hits the cache", async () => {
    const { preparer, extractor } = await setUp();
    const first = request([pdfPart(REPORT, 1)]);
    const session = prepared(preparer.prepare(first));
    await Promise.all([
      session.requestFor(first, false, signal()),
      session.requestFor(first, false, signal()),
    ]);
    assert.equal(extractor.stats().parses, 1);
    const next = request([pdfPart(REPORT, 3)]);
    await prepared(preparer.prepare(next)).requestFor(next, false, signal());
    assert.deepEqual([extractor.stats().parses, extractor.stats().cacheHits], [1, 1]);
  });

  test("a PDF by URL is fetched once, then inlined for a route that reads PDFs and read for one that does not", async () => {
    const { preparer, canary, network } = await setUp();
    canary.route("/papers/attention.pdf", (response) =>
      response.writeHead(200, { "content-type": "application/pdf" }).end(REPORT),
    );
    const original = request([urlPart("http://public.test/papers/attention.pdf", 1)]);
    const session = prepared(preparer.prepare(original));

    const asFile = await session.requestFor(original, true, signal());
    assert.deepEqual(asFile.request.messages[0].content[1], {
      type: "file",
      source: { kind: "base64", mediaType: "application/pdf", data: REPORT.toString("base64") },
      filename: "attention.pdf",
    });
    const asText = await session.requestFor(original, false, signal());
    assert.match(
      (asText.request.messages[0].content[1] as { text: string }).text,
      /^<file name="attention\.pdf" pages="2">\n--- page 1 ---\nRevenue grew 12 %/,
    );
    assert.equal(canary.hits.length, 1);
    assert.deepEqual(network.violations, []);
  });

  test("a URL that serves something else than a PDF stays a URL, its body not read", async () => {
    const { preparer, canary } = await setUp();
    let bodyWritten = false;
    canary.route("/watch", (response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.write("<!doctype html><title>video</title>");
      // The fetcher drops the connection at the headers: the rest is never asked for.
      setTimeout(() => {
        bodyWritten = !response.destroyed && response.write("more");
        response.end();
      }, 200);
    });
    const original = request([urlPart("http://public.test/watch", 1)]);
    const read = await prepared(preparer.prepare(original)).requestFor(original, false, signal());
    assert.equal(read.request, original);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(bodyWritten, false);
  });

  test("a URL to a private address is refused before any connection, naming the part", async () => {
    const { preparer, network, canary } = await setUp();
    for (const url of [
      "http://intranet.test/report.pdf",
      "http://10.0.0.5/report.pdf",
      "http://127.0.0.1/a.pdf",
    ]) {
      const original = request([urlPart(url, 2)]);
      const error = await rejection(
        prepared(preparer.prepare(original)).requestFor(original, true, signal()),
      );
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, "messages[0].content[2]");
      assert.match(
        error.message,
        /^messages\[0\]\.content\[2\]: the file was not fetched\. Refused: .* is not a public internet address/,
      );
    }
    assert.deepEqual(network.attempts, []);
    // Only the name lookup: IP literals are refused on the URL alone.
    assert.deepEqual(network.lookups, ["intranet.test"]);
    assert.equal(canary.hits.length, 0);
  });

  test("a scanned, an encrypted and a damaged PDF are invalid_request naming their part", async () => {
    const { preparer } = await setUp();
    const cases: Array<[Buffer, RegExp]> = [
      [SCAN, /"scan\.pdf" has no text layer in its first page \(a scanned or image-only PDF\)/],
      [LOCKED, /"scan\.pdf" is encrypted and needs a password/],
      [REPORT.subarray(0, 200), /"scan\.pdf" could not be read as a PDF \(damaged or truncated file\)/],
    ];
    for (const [bytes, message] of cases) {
      const original = request([pdfPart(bytes, 4, { title: "scan.pdf" })]);
      const error = await rejection(
        prepared(preparer.prepare(original)).requestFor(original, false, signal()),
      );
      assert.equal(error.code, "invalid_request");
      assert.equal(error.param, "messages[0].content[4]");
      assert.match(error.message, /^messages\[0\]\.content\[4\]: /);
      assert.match(error.message, message);
    }
  });

  test("a PDF over the request's byte cap is refused unread; a route that reads PDFs still gets it", async () => {
    const { preparer, extractor } = await setUp();
    const tools = [
      {
        id: "pdf" as const,
        maxUses: 1000,
        events: false,
        parameters: { max_file_bytes: 1024 },
        param: "plugins[0]",
      },
    ];
    const big = buildTestPdf(buildTextPages(1), { paddingBytes: 4_000 });
    const original = request([pdfPart(big, 1, { filename: "big.pdf" })], tools);
    const session = prepared(preparer.prepare(original));
    const error = await rejection(session.requestFor(original, false, signal()));
    assert.match(error.message, /"big\.pdf" is 5 KiB; PDFs are accepted up to 1 KiB\./);
    assert.equal(extractor.stats().parses, 0);
    assert.equal((await session.requestFor(original, true, signal())).request, original);
  });

  test("a malformed activation is refused naming its field, with or without documents", async () => {
    const { preparer } = await setUp();
    for (const content of [[], [pdfPart(REPORT, 1)]]) {
      assert.throws(
        () =>
          preparer.prepare(
            request(content, [
              {
                id: "pdf",
                maxUses: 1,
                events: false,
                parameters: { engine: "mistral-ocr" },
                param: "plugins[1]",
              },
            ]),
          ),
        (error: unknown) =>
          error instanceof GatewayError &&
          error.code === "invalid_request" &&
          error.param === "plugins[1].engine" &&
          error.message.startsWith("plugins[1].engine: engine must be one of native, text"),
      );
    }
    assert.equal(preparer.prepare(request([])), undefined);
    // A text file is no document of this kind.
    const text: FilePart = {
      type: "file",
      source: { kind: "base64", mediaType: "text/plain", data: "aGk=" },
    };
    assert.equal(preparer.prepare(request([text])), undefined);
  });

  test("the reservation's bounds: the prompt without the inline PDFs, their most text, the price of their pages", async () => {
    const { preparer } = await setUp({ price_per_page_usd: "0.01", max_pages: 10, max_text_bytes: 4096 });
    const url = urlPart("http://public.test/a.pdf", 2);
    const original = request([pdfPart(REPORT, 1), url]);
    const session = prepared(preparer.prepare(original));
    // The inline PDF's two pages, and the page cap for the URL whose bytes are not known yet.
    assert.equal(session.maxCostMicroUsd, 2 * 10_000 + 10 * 10_000);
    assert.ok(
      session.maxTextTokens >= 4096 && session.maxTextTokens < 4096 * 2,
      String(session.maxTextTokens),
    );
    assert.deepEqual(session.withoutDocuments(original).messages[0].content, [
      { type: "text", text: "Summarise." },
      url,
    ]);
  });

  test("an abort ends the reading with the signal's reason", async () => {
    const { preparer, canary } = await setUp();
    canary.route("/slow.pdf", () => {});
    const original = request([urlPart("http://public.test/slow.pdf", 1)]);
    const controller = new AbortController();
    const reading = prepared(preparer.prepare(original)).requestFor(original, true, controller.signal);
    setTimeout(() => controller.abort(new Error("client disconnected")), 50);
    await assert.rejects(reading, /client disconnected/);
  });

  test(`more than ${MAX_DOCUMENTS_READ} documents to fetch or read is refused naming the first one past it`, async () => {
    const { preparer, extractor } = await setUp();
    const parts = Array.from({ length: MAX_DOCUMENTS_READ + 1 }, (_, index) => pdfPart(REPORT, index + 1));
    const original = request(parts);
    const session = prepared(preparer.prepare(original));
    const error = await rejection(session.requestFor(original, false, signal()));
    assert.equal(error.param, `messages[0].content[${MAX_DOCUMENTS_READ + 1}]`);
    assert.equal(extractor.stats().parses, 0);
    // Passed as files, they need no work and no cap applies.
    assert.equal((await session.requestFor(original, true, signal())).request, original);
  });
});
