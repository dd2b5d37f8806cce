/**
 * How the gateway serves its web pages (/docs and /console): content types, caching (immutable
 * versioned renderer, ETag revalidation, 304), gzip, security headers, 404 for unknown files, and
 * no path that reaches a file outside the page folders.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { SWAGGER_UI_VERSION } from "../../src/http/routes/docs-routes.js";
import { startTestGateway, type TestGateway } from "../helpers/test-gateway.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const RENDERER = `/docs/swagger-ui/${SWAGGER_UI_VERSION}`;
let context: TestGateway;

before(async () => {
  context = await startTestGateway("embedded");
});
after(async () => {
  await context.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${context.url}${path}`, { headers });

/** A GET with the path sent exactly as given (fetch would normalise `..` away). */
function getRaw(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${context.url}/`, { path, method: "GET" }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

function assertStrictPagePolicy(response: Response) {
  const policy = response.headers.get("content-security-policy") ?? "";
  assert.match(policy, /default-src 'none'/);
  assert.match(policy, /script-src 'self'(;|$)/, "scripts only from the gateway, none inline");
  assert.match(policy, /connect-src 'self'/);
  assert.match(policy, /frame-ancestors 'none'/);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("referrer-policy"), "no-referrer");
}

test("/docs: the reference page, its renderer from the npm package, immutable under its version", async () => {
  const page = await get("/docs");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assertStrictPagePolicy(page);
  const html = await page.text();
  assert.ok(html.includes(`${RENDERER}/swagger-ui-bundle.js`), "the page names the renderer's version");
  assert.ok(html.includes('src="/docs/docs.js"'));

  const bundle = await get(`${RENDERER}/swagger-ui-bundle.js`, { "Accept-Encoding": "identity" });
  assert.equal(bundle.status, 200);
  assert.equal(bundle.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(bundle.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(bundle.headers.get("content-encoding"), null, "no gzip unless asked");
  const packaged = readFileSync(join(ROOT, "node_modules/swagger-ui-dist/swagger-ui-bundle.js"));
  assert.ok(Buffer.from(await bundle.arrayBuffer()).equals(packaged), "the package's own file");

  const css = await get(`${RENDERER}/swagger-ui.css`, { "Accept-Encoding": "gzip, br" });
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  assert.equal(css.headers.get("content-encoding"), "gzip");
  assert.equal(css.headers.get("vary"), "Accept-Encoding");
  // fetch decompresses by itself; the raw bytes are checked through node:http below.
  assert.ok((await css.text()).includes(".swagger-ui"));

  const init = await get("/docs/docs.js");
  assert.equal(init.status, 200);
  assert.equal(init.headers.get("cache-control"), "no-cache");
  assert.match(await init.text(), /url: "\/openapi\.json"/);

  for (const path of [
    "/docs/swagger-ui/0.0.1/swagger-ui-bundle.js",
    `${RENDERER}/swagger-ui-bundle.js.map`,
    `${RENDERER}/package.json`,
    `${RENDERER}/index.html`,
    "/docs/nothing.js",
  ]) {
    assert.equal((await get(path)).status, 404, path);
  }
});

test("GET / leads a browser to the console (which links the API reference)", async () => {
  const home = await get("/", { accept: "text/html" });
  assert.equal(home.status, 200, "fetch follows the redirect");
  assert.equal(new URL(home.url).pathname, "/console");
  const redirect = await fetch(`${context.url}/`, { redirect: "manual" });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get("location"), "/console");
  await redirect.body?.cancel();
});

test("gzip copies decompress to the file, and revalidation answers 304", async () => {
  const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    httpRequest(
      `${context.url}/console/console.css`,
      { headers: { "Accept-Encoding": "gzip" } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
      },
    )
      .on("error", reject)
      .end();
  });
  assert.equal(raw.headers["content-encoding"], "gzip");
  assert.ok(gunzipSync(raw.body).equals(readFileSync(join(ROOT, "web/console/console.css"))));

  const first = await get("/console/app.js");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(first.headers.get("cache-control"), "no-cache");
  const etag = first.headers.get("etag");
  assert.match(etag ?? "", /^"[\w-]+"$/);
  const again = await get("/console/app.js", { "If-None-Match": etag! });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), "");
  const changed = await get("/console/app.js", { "If-None-Match": '"something-else"' });
  assert.equal(changed.status, 200);
});

test("/console: the page with its policy, plain modules and styles, 404 for anything else", async () => {
  for (const path of ["/console", "/console/", "/console/index.html"]) {
    const page = await get(path);
    assert.equal(page.status, 200, path);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assertStrictPagePolicy(page);
    assert.match(await page.text(), /<script type="module" src="\/console\/app\.js"><\/script>/);
  }
  const styles = await get("/console/console.css");
  assert.equal(styles.headers.get("content-type"), "text/css; charset=utf-8");
  assert.equal(styles.headers.get("x-content-type-options"), "nosniff");
  for (const path of ["/console/nothing.js", "/console/README.md", "/console/app", "/console/a/b.js"]) {
    assert.equal((await get(path)).status, 404, path);
  }
});

test("no path reaches a file outside the page folders", async () => {
  const secretMarker = '"name": "hi-gateway"';
  for (const path of [
    "/console/..%2fpackage.json",
    "/console/..%2f..%2fpackage.json",
    "/console/%2e%2e%2fpackage.json",
    "/console/%2e%2e/%2e%2e/package.json",
    "/console/..%5cpackage.json",
    "/console/../package.json",
    "/console/../../package.json",
    "/console//etc/passwd",
    "/console/%2fetc%2fpasswd",
    "/docs/..%2f..%2fpackage.json",
    `${RENDERER}/..%2fpackage.json`,
    `${RENDERER}/..%2f..%2f..%2fpackage.json`,
    "/docs/swagger-ui/..%2f..%2f/package.json",
  ]) {
    const { status, body } = await getRaw(path);
    assert.equal(status, 404, path);
    assert.ok(!body.includes(secretMarker) && !body.includes("root:"), path);
  }
});

test("the pages carry no inline script and no inline event handler", () => {
  for (const folder of ["web/console", "web/docs"]) {
    for (const name of readdirSync(join(ROOT, folder)).filter((file) => file.endsWith(".html"))) {
      const html = readFileSync(join(ROOT, folder, name), "utf8");
      for (const tag of html.match(/<script\b[^>]*>/g) ?? [])
        assert.match(tag, /\ssrc="\//, `${name}: ${tag}`);
      assert.doesNotMatch(html, /\son[a-z]+\s*=/i, name);
      assert.doesNotMatch(html, /\sstyle\s*=/i, name);
    }
  }
});
