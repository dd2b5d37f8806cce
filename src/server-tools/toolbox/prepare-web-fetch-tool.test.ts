import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestPdf, buildTextPages } from "../../../test/helpers/build-test-pdf.js";
import {
  type Canary,
  createTripwireNetwork,
  PUBLIC_TEST_IPV4,
  startCanary,
} from "../../../test/helpers/fetch-tripwire.js";
import type { ServerToolActivation } from "../../canonical/index.js";
import {
  createPdfTextExtractor,
  type PdfTextExtractor,
  pdfToolConfigSchema,
  resolvePdfToolSettings,
} from "../pdf/index.js";
import { defaultWebFetchSettings } from "../web-fetch/index.js";
import { prepareWebFetchTool } from "./prepare-web-fetch-tool.js";

const activation: ServerToolActivation = { id: "web_fetch", maxUses: 10, events: false, param: "plugins[0]" };
const settings = { ...defaultWebFetchSettings(), timeoutMs: 5_000, pricePerCallMicroUsd: 1_000 };

let canary: Canary;
let extractor: PdfTextExtractor;
const network = () =>
  createTripwireNetwork({
    dns: { "public.test": [PUBLIC_TEST_IPV4] },
    routes: { [`${PUBLIC_TEST_IPV4}:80`]: canary.port },
  });

before(async () => {
  canary = await startCanary();
  extractor = createPdfTextExtractor(
    resolvePdfToolSettings(pdfToolConfigSchema.parse({ price_per_page_usd: "0.003", max_pages: 20 })),
  );
  const serve = (path: string, bytes: Buffer) =>
    canary.route(path, (response) =>
      response.writeHead(200, { "content-type": "application/pdf" }).end(bytes),
    );
  serve("/report.pdf", buildTestPdf(buildTextPages(3, 2)));
  serve("/scan.pdf", buildTestPdf([{ image: true }, { image: true }]));
  serve("/long.pdf", buildTestPdf(buildTextPages(12, 30, "a long line of text about quarterly figures")));
});
after(async () => {
  await canary.close();
  await extractor.close();
});

const pdfReader = (maxPages = 20) => ({
  extractor,
  options: { engine: "native" as const, maxPages, maxFileBytes: 1 << 20 },
});
const call = (url: string) => JSON.stringify({ url });

describe("web_fetch of a PDF", () => {
  test("the model reads the PDF's text with page markers; its pages are billed on the pdf line", async () => {
    const tool = prepareWebFetchTool(activation, settings, network(), pdfReader());
    const execution = await tool.execute(call("http://public.test/report.pdf"), new AbortController().signal);
    assert.equal(execution.error, undefined);
    assert.match(
      execution.forModel,
      /^URL: http:\/\/public\.test\/report\.pdf\nContent type: application\/pdf\n\n/,
    );
    assert.match(
      execution.forModel,
      /<file name="report\.pdf" pages="3">\n--- page 1 ---\npage 1 line 1 lorem ipsum\npage 1 line 2 lorem ipsum\n\n--- page 2 ---/,
    );
    assert.doesNotMatch(execution.forModel, /not read/);
    assert.equal(execution.costMicroUsd, 1_000 + 3 * 3_000);
    assert.deepEqual(execution.costsByTool, { web_fetch: 1_000, pdf: 9_000 });
    assert.equal(execution.output?.kind, "fetch");
    // The reservation covers the page cap at the page price on top of the call.
    assert.equal(tool.maxCallCostMicroUsd, 1_000 + 20 * 3_000);
  });

  test("a PDF without a text layer is a failed call whose result says so, and costs nothing", async () => {
    const tool = prepareWebFetchTool(activation, settings, network(), pdfReader());
    const execution = await tool.execute(call("http://public.test/scan.pdf"), new AbortController().signal);
    assert.equal(execution.error?.code, "unsupported_content_type");
    assert.equal(execution.costMicroUsd, 0);
    assert.equal(
      execution.forModel,
      'web_fetch of http://public.test/scan.pdf: Failed: "scan.pdf" has no text layer in the 2 pages read (a scanned or image-only PDF); send it to a model that reads PDFs, or send its text.',
    );
  });

  test("text past the call's token budget is cut, and only pages whose text is shown are billed", async () => {
    const tool = prepareWebFetchTool(
      { ...activation, parameters: { max_content_tokens: 400 } },
      settings,
      network(),
      pdfReader(),
    );
    const execution = await tool.execute(call("http://public.test/long.pdf"), new AbortController().signal);
    assert.match(
      execution.forModel,
      /\[Truncated: the content is longer than web_fetch's limit of about 400 tokens/,
    );
    const shown = [...execution.forModel.matchAll(/^--- page (\d+) ---$/gm)].length;
    assert.ok(shown >= 1 && shown < 12, `${shown} pages shown`);
    assert.deepEqual(execution.costsByTool, { web_fetch: 1_000, pdf: shown * 3_000 });
  });

  test("without the pdf reader the model is told the PDF was not read", async () => {
    const tool = prepareWebFetchTool(activation, settings, network(), undefined);
    const execution = await tool.execute(call("http://public.test/report.pdf"), new AbortController().signal);
    assert.match(execution.forModel, /\[A PDF document of \d+ bytes; its text was not read\.\]$/);
    assert.equal(execution.costMicroUsd, 1_000);
    assert.equal(execution.costsByTool, undefined);
  });
});
