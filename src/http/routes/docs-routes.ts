/**
 * `/docs`: the interactive API reference, Swagger UI rendering `/openapi.json`. The renderer comes
 * from the swagger-ui-dist package and is served by the gateway itself (no CDN) under a path that
 * names its version, so browsers may keep it for a year; the page and its initializer live in
 * `web/docs/` and are revalidated by ETag.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { ASSET_HEADERS, PAGE_HEADERS } from "../router/page-headers.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createStaticFolder } from "../router/static-folder.js";
import { resolveWebFolder } from "./web-folders.js";

const require = createRequire(import.meta.url);
const swaggerUiPackage = require.resolve("swagger-ui-dist/package.json");
export const SWAGGER_UI_VERSION: string = require("swagger-ui-dist/package.json").version;
/** The files of the package the page loads; the rest (source maps, other builds) is not served. */
const SWAGGER_UI_FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"] as const;

const PAGE = { 200: { description: "The page", mediaType: "text/html" } };
const MOVED = { 301: { description: "Moved to /docs" } };

export function createDocsRoutes(): RouteDefinition[] {
  const renderer = createStaticFolder(dirname(swaggerUiPackage), {
    names: SWAGGER_UI_FILES,
    cacheControl: "public, max-age=31536000, immutable",
    headers: ASSET_HEADERS,
  });
  const page = createStaticFolder(resolveWebFolder("docs"), {
    cacheControl: "no-cache",
    headers: ASSET_HEADERS,
    replacements: { "%SWAGGER_UI_VERSION%": SWAGGER_UI_VERSION },
  });

  return [
    {
      method: "GET",
      path: "/docs",
      summary: "The interactive API reference (Swagger UI over this document)",
      responses: PAGE,
      handler: async (c) => (await page.serve("index.html", c.req.raw, PAGE_HEADERS)) ?? c.notFound(),
    },
    {
      method: "GET",
      path: "/docs/",
      summary: "Redirect to /docs",
      responses: MOVED,
      handler: (c) => c.redirect("/docs", 301),
    },
    {
      method: "GET",
      path: "/docs/swagger-ui/{version}/{name}",
      summary: "A file of the Swagger UI renderer (cacheable for a year: the path names its version)",
      responses: { 200: { description: "The file" }, 404: { description: "No such file or version" } },
      handler: async (c) => {
        if (c.req.param("version") !== SWAGGER_UI_VERSION) return c.notFound();
        return (await renderer.serve(c.req.param("name") ?? "", c.req.raw)) ?? c.notFound();
      },
    },
    {
      method: "GET",
      path: "/docs/{name}",
      summary: "A file of the reference page",
      responses: { 200: { description: "The file" }, ...MOVED, 404: { description: "No such file" } },
      handler: async (c) => {
        const name = c.req.param("name") ?? "";
        if (name === "index.html") return c.redirect("/docs", 301);
        return (await page.serve(name, c.req.raw)) ?? c.notFound();
      },
    },
  ];
}
