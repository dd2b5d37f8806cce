/**
 * web_fetch end to end below the tool loop: pages served by a loopback canary under the public name
 * `public.test` (test/helpers/fetch-tripwire.ts), HTML converted in the real worker thread.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  type Canary,
  createTripwireNetwork,
  PUBLIC_TEST_IPV4,
  startCanary,
} from "../../../test/helpers/fetch-tripwire.js";
import {
  defaultWebFetchSettings,
  type WebFetchSettings,
} from "../../config/server-tools/web-fetch-config.js";
import { executeWebFetch, type WebFetchResult, type WebFetchSuccess } from "./execute-web-fetch.js";
import { formatWebFetchResultForModel } from "./format-web-fetch-result.js";
import { createHtmlConverter, type HtmlConverter } from "./html-conversion-pool.js";

const ARTICLE = readFileSync(new URL("./testdata/article-page.html", import.meta.url));

let canary: Canary;
let htmlConverter: HtmlConverter;

before(async () => {
  canary = await startCanary();
  htmlConverter = createHtmlConverter();
  // The workers start with the first page; under tsx on a loaded machine that takes seconds.
  const warm = Buffer.from("<p>warm</p>");
  await htmlConverter.convert({
    html: warm,
    charset: null,
    pageUrl: "http://x.test/",
    owner: "",
    timeoutMs: 60_000,
  });
});

after(async () => {
  await htmlConverter.close();
  await canary.close();
});

function run(url: string, overrides: Partial<WebFetchSettings> = {}, maxContentTokens?: number) {
  const network = createTripwireNetwork({
    dns: { "public.test": [PUBLIC_TEST_IPV4] },
    routes: { [`${PUBLIC_TEST_IPV4}:80`]: canary.port },
  });
  return executeWebFetch(
    { url, maxContentTokens },
    {
      settings: { ...defaultWebFetchSettings(), timeoutMs: 10_000, ...overrides },
      network,
      htmlConverter,
      now: () => new Date("2026-03-04T05:06:07.000Z"),
    },
  );
}

function page(result: WebFetchResult): WebFetchSuccess {
  if (!result.ok) assert.fail(`expected a page, got ${result.reason}: ${result.message}`);
  return result;
}

function serve(path: string, contentType: string | undefined, body: string | Buffer, status = 200): void {
  canary.route(path, (response) =>
    response.writeHead(status, contentType === undefined ? {} : { "content-type": contentType }).end(body),
  );
}

describe("web_fetch by content type", () => {
  test("an HTML page becomes markdown of its main content with absolute links, after a redirect", async () => {
    canary.route("/old-post", (response) =>
      response.writeHead(301, { location: "/posts/2026/hydration" }).end(),
    );
    serve("/posts/2026/hydration", "text/html; charset=utf-8", ARTICLE);
    const result = page(await run("http://public.test/old-post"));
    assert.equal(result.kind, "html");
    assert.equal(result.contentType, "text/html");
    assert.equal(result.url, "http://public.test/old-post");
    assert.equal(result.finalUrl, "http://public.test/posts/2026/hydration");
    assert.equal(result.redirects, 1);
    assert.equal(result.title, "Sourdough hydration explained | The Bread Lab");
    assert.equal(result.bytesFetched, ARTICLE.length);
    assert.equal(result.truncated, false);
    assert.equal(result.retrievedAt, "2026-03-04T05:06:07.000Z");
    assert.ok(result.durationMs >= 0);
    // Relative links resolve against the final URL, not the one asked for.
    assert.ok(
      result.text.includes("[guide to flour types](http://public.test/posts/guides/flour-types.html)"),
    );
    assert.match(result.text, /\n## Why hydration matters\n/);
    assert.ok(!result.text.includes("Shop our flour"));
    assert.ok(!result.text.includes("All rights reserved"));

    const forModel = formatWebFetchResultForModel(result);
    assert.ok(
      forModel.startsWith("URL: http://public.test/posts/2026/hydration\nTitle: Sourdough hydration"),
    );
    assert.ok(forModel.includes("## Why hydration matters"));
  });

  test("plain text and JSON pass through unchanged", async () => {
    const text = "line one\n  indented *not markdown* <b>not html</b>\n";
    const json = JSON.stringify({ items: [1, 2, 3], note: "<p>kept</p>" });
    serve("/notes.txt", "text/plain", text);
    serve("/data.json", "application/json", json);
    serve("/feed", "application/vnd.api+json", json);
    const plain = page(await run("http://public.test/notes.txt"));
    assert.equal(plain.kind, "text");
    assert.equal(plain.text, text);
    assert.equal(plain.title, null);
    for (const path of ["/data.json", "/feed"]) {
      const data = page(await run(`http://public.test${path}`));
      assert.equal(data.kind, "json");
      assert.equal(data.text, json);
    }
  });

  test("text in a declared charset is decoded from it", async () => {
    serve("/latin1.txt", "text/plain; charset=ISO-8859-1", Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    assert.equal(page(await run("http://public.test/latin1.txt")).text, "café");
    const html = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"><title>Caf'),
      Buffer.from([0xe9]),
      Buffer.from("</title></head><body><p>Cr"),
      Buffer.from([0xe8]),
      Buffer.from("me br"),
      Buffer.from([0xfb]),
      Buffer.from("l"),
      Buffer.from([0xe9]),
      Buffer.from("e</p></body></html>"),
    ]);
    serve("/cp1252.html", "text/html", html);
    const decoded = page(await run("http://public.test/cp1252.html"));
    assert.equal(decoded.title, "Café");
    assert.equal(decoded.text, "Crème brûlée");
  });

  test("a PDF comes back as bytes with its type, by header or by its magic bytes", async () => {
    const pdf = Buffer.from("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n");
    serve("/paper.pdf", "application/pdf", pdf);
    serve("/download", "application/octet-stream", pdf);
    for (const path of ["/paper.pdf", "/download"]) {
      const result = page(await run(`http://public.test${path}`));
      assert.equal(result.kind, "pdf");
      assert.equal(result.contentType, "application/pdf");
      assert.equal(result.text, "");
      assert.deepEqual(result.pdf, { mediaType: "application/pdf", data: pdf });
      assert.equal(result.bytesFetched, pdf.length);
    }
  });

  test("an untyped body is classified by its first bytes", async () => {
    serve(
      "/untyped-html",
      undefined,
      "<!DOCTYPE html><html><head><title>T</title></head><body><p>hello</p></body></html>",
    );
    serve("/untyped-text", undefined, "just words");
    serve("/untyped-binary", undefined, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    assert.equal(page(await run("http://public.test/untyped-html")).text, "hello");
    assert.equal(page(await run("http://public.test/untyped-text")).kind, "text");
    const binary = await run("http://public.test/untyped-binary");
    assert.equal(!binary.ok && binary.reason, "unsupported_type");
  });

  test("other types are refused with a message for the model", async () => {
    serve("/photo.png", "image/png", Buffer.alloc(1024));
    serve("/app.zip", "application/zip", Buffer.alloc(1024));
    for (const [path, type] of [
      ["/photo.png", "image/png"],
      ["/app.zip", "application/zip"],
    ]) {
      const result = await run(`http://public.test${path}`);
      assert.equal(result.ok, false);
      if (result.ok) continue;
      assert.equal(result.reason, "unsupported_type");
      assert.equal(result.contentType, type);
      assert.equal(result.message, `Failed: content of type ${type} is not supported.`);
      assert.equal(
        formatWebFetchResultForModel(result),
        `web_fetch of http://public.test${path}: Failed: content of type ${type} is not supported.`,
      );
    }
  });
});

describe("web_fetch caps and failures", () => {
  test("long content is cut at the smaller of the configured and the requested token cap, with a note", async () => {
    const paragraphs = Array.from({ length: 300 }, (_, index) => `Paragraph ${index}: ${"word ".repeat(40)}`);
    serve("/long.txt", "text/plain", paragraphs.join("\n\n"));
    const configured = page(await run("http://public.test/long.txt", { maxContentTokens: 1000 }));
    assert.equal(configured.truncated, true);
    assert.ok(
      Buffer.byteLength(configured.text) <= 3000 + 200,
      `${Buffer.byteLength(configured.text)} bytes`,
    );
    assert.match(
      configured.text,
      /\n\n\[Truncated: the content is longer than web_fetch's limit of about 1000 tokens/,
    );
    assert.match(configured.text, /^Paragraph 0: /);

    const requested = page(await run("http://public.test/long.txt", { maxContentTokens: 1000 }, 300));
    assert.ok(Buffer.byteLength(requested.text) <= 900 + 200);
    assert.match(requested.text, /about 300 tokens/);
    // A request cannot raise the configured cap.
    const raised = page(await run("http://public.test/long.txt", { maxContentTokens: 1000 }, 50_000));
    assert.equal(raised.text, configured.text);
    const whole = page(await run("http://public.test/long.txt"));
    assert.equal(whole.truncated, false);
  });

  test("HTML past the conversion's size bound is not read; what is read is converted and says so", async () => {
    const html = `<html><body><article><p>The first part.</p>${"<p>filler words</p>".repeat(200)}<p>The hidden end.</p></article></body></html>`;
    serve("/large.html", "text/html", html);
    const htmlConversion = { ...defaultWebFetchSettings().htmlConversion, maxBytes: 2048 };
    const result = page(await run("http://public.test/large.html", { htmlConversion }));
    assert.equal(result.bytesFetched, Buffer.byteLength(html));
    assert.equal(result.truncated, true);
    assert.match(result.text, /^The first part\./);
    assert.ok(!result.text.includes("hidden end"));
    assert.match(
      result.text,
      /\n\n\[Truncated: the page is larger than web_fetch converts to text \(2048 bytes or 20000 elements of HTML\); the rest was not read\.\]$/,
    );
  });

  test("a page of 200,000 nested elements converts to its text", async () => {
    serve(
      "/deep.html",
      "text/html",
      `<html><body>${"<div>".repeat(200_000)}Deep text.${"</div>".repeat(200_000)}</body></html>`,
    );
    const result = page(await run("http://public.test/deep.html", { timeoutMs: 60_000 }));
    assert.match(result.text, /^Deep text\./);
    // 2.2 MB of HTML: past the default size bound, in its closing tags.
    assert.equal(result.truncated, true);
  });

  test("a refused destination is a typed failure whose model text says refused and leaks no detail", async () => {
    const result = await run("http://169.254.169.254/latest/meta-data/iam/");
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.reason, "blocked_address");
    assert.equal(result.detail, "linkLocal");
    assert.equal(result.retrievedAt, "2026-03-04T05:06:07.000Z");
    const forModel = formatWebFetchResultForModel(result);
    assert.match(forModel, /Refused: 169\.254\.169\.254 is not a public internet address/);
    assert.ok(!forModel.includes("linkLocal"));
  });

  test("an HTTP error status is a failure with the status", async () => {
    serve("/missing", "text/html", "<h1>Not here</h1>", 404);
    const result = await run("http://public.test/missing");
    assert.equal(!result.ok && result.reason, "http_status");
    assert.equal(!result.ok && result.status, 404);
    assert.equal(!result.ok && result.message, "Failed: the server answered HTTP 404.");
  });

  test("the caller's abort rejects with its reason instead of becoming a tool result", async () => {
    canary.route("/never", () => undefined);
    const controller = new AbortController();
    const reason = new Error("request cancelled");
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(
      executeWebFetch(
        { url: "http://public.test/never" },
        {
          settings: defaultWebFetchSettings(),
          signal: controller.signal,
          htmlConverter,
          network: createTripwireNetwork({
            dns: { "public.test": [PUBLIC_TEST_IPV4] },
            routes: { [`${PUBLIC_TEST_IPV4}:80`]: canary.port },
          }),
        },
      ),
      (error) => error === reason,
    );
  });
});
