/**
 * `/console`: the web console for workspace admins. Plain ES modules and CSS from `web/console/`
 * (no build step), revalidated by ETag; the page talks to nothing but the admin API of this
 * gateway (docs/console.md).
 */
import { ASSET_HEADERS, PAGE_HEADERS } from "../router/page-headers.js";
import type { RouteDefinition } from "../router/route-definition.js";
import { createStaticFolder } from "../router/static-folder.js";
import { resolveWebFolder } from "./web-folders.js";

const PAGE = { 200: { description: "The console page", mediaType: "text/html" } };

export function createConsoleRoutes(): RouteDefinition[] {
  const files = createStaticFolder(resolveWebFolder("console"), {
    cacheControl: "no-cache",
    headers: ASSET_HEADERS,
  });
  const servePage = async (request: Request) => files.serve("index.html", request, PAGE_HEADERS);

  return [
    {
      method: "GET",
      path: "/console",
      summary: "The web console for workspace admins",
      responses: PAGE,
      handler: async (c) => (await servePage(c.req.raw)) ?? c.notFound(),
    },
    {
      method: "GET",
      path: "/console/",
      summary: "The web console for workspace admins",
      responses: PAGE,
      handler: async (c) => (await servePage(c.req.raw)) ?? c.notFound(),
    },
    {
      method: "GET",
      path: "/console/{name}",
      summary: "A file of the web console (its modules and styles)",
      responses: { 200: { description: "The file" }, 404: { description: "No such file" } },
      handler: async (c) => {
        const name = c.req.param("name") ?? "";
        if (name === "index.html") return (await servePage(c.req.raw)) ?? c.notFound();
        return (await files.serve(name, c.req.raw)) ?? c.notFound();
      },
    },
  ];
}
