/**
 * `/console`: the web console for workspace admins. Plain ES modules and CSS from `web/console/`
 * (no build step), revalidated by ETag; the page talks to nothing but the admin API of this
 * gateway (docs/console.md).
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { ASSET_HEADERS, PAGE_HEADERS } from "../page-headers.js";
import { createStaticFolder } from "../static-folder.js";
import { resolveWebFolder } from "./web-folders.js";

export function createConsoleRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const files = createStaticFolder(resolveWebFolder("console"), {
    cacheControl: "no-cache",
    headers: ASSET_HEADERS,
  });
  const servePage = async (request: Request) => files.serve("index.html", request, PAGE_HEADERS);

  app.get("/console", async (c) => (await servePage(c.req.raw)) ?? c.notFound());
  app.get("/console/", async (c) => (await servePage(c.req.raw)) ?? c.notFound());
  app.get("/console/:name", async (c) => {
    const name = c.req.param("name");
    if (name === "index.html") return (await servePage(c.req.raw)) ?? c.notFound();
    return (await files.serve(name, c.req.raw)) ?? c.notFound();
  });
  return app;
}
