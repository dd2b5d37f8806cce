import assert from "node:assert/strict";
import { test } from "node:test";
import type { GatewayConfig } from "../config/gateway-config.js";
import { createLogger } from "../logging/logger.js";
import { createRoutes } from "./create-routes.js";
import { createOpenApiDocument } from "./openapi/openapi-document.js";
import { createRouter } from "./router/create-app.js";

/** The table needs its dependencies only when a handler runs; none runs here. */
function createTable() {
  const unused = {} as never;
  const config = {
    maxBodyBytes: 1024,
    requestShape: {},
    models: [],
    imageGenerationConfigured: false,
    defaultRequestsPerMinute: null,
  } as unknown as GatewayConfig;
  return createRoutes({
    config,
    store: unused,
    state: unused,
    authenticator: unused,
    engine: unused,
    admin: unused,
    spendGuard: unused,
    internalSecret: "secret",
    isDraining: () => false,
  });
}

/** A request path the route's pattern matches: every `{name}` filled with a sample segment. */
function samplePath(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === "slug" ? "openai/gpt-4.1" : `sample-${name}`,
  );
}

test("every route of the table is in /openapi.json, and every operation of the document is served", () => {
  const routes = createTable();
  const document = createOpenApiDocument(routes) as { paths: Record<string, Record<string, unknown>> };
  const router = createRouter(routes, createLogger("silent"));

  const tableOperations = routes.map((route) => `${route.method} ${route.path}`);
  assert.equal(new Set(tableOperations).size, tableOperations.length, "one entry per method and path");
  const documentOperations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.deepEqual([...documentOperations].sort(), [...tableOperations].sort());

  for (const operation of documentOperations) {
    const [method, path] = operation.split(" ") as [string, string];
    assert.ok(router.allowedMethods(samplePath(path)).includes(method), `${operation} is routed`);
  }
  for (const required of [
    "POST /api/v1/chat/completions",
    "POST /api/v1/responses",
    "POST /api/v1/messages",
    "GET /openapi.json",
  ]) {
    assert.ok(tableOperations.includes(required), required);
  }
});

test("the document is OpenAPI 3.1 whose references all resolve to a component", () => {
  const document = createOpenApiDocument(createTable()) as {
    openapi: string;
    components: { schemas: Record<string, unknown> };
  };
  assert.equal(document.openapi, "3.1.0");
  const references = JSON.stringify(document).match(/"\$ref":"[^"]+"/g) ?? [];
  assert.ok(references.length > 50);
  for (const reference of new Set(references)) {
    const name = /#\/components\/schemas\/([^"]+)"/.exec(reference)?.[1];
    assert.ok(name !== undefined && name in document.components.schemas, reference);
  }
});

test("a parameter that spans segments is matched as a whole; others are one segment", () => {
  const router = createRouter(createTable(), createLogger("silent"));
  assert.deepEqual(router.allowedMethods("/api/v1/models/openai/gpt-4.1"), ["GET", "HEAD"]);
  assert.deepEqual(router.allowedMethods("/internal/admin/keys/a/b"), []);
});

test("/docs groups every operation under one of its six tags, in the document's order", () => {
  const document = createOpenApiDocument(createTable()) as {
    tags: Array<{ name: string; description: string }>;
    paths: Record<string, Record<string, { tags?: string[] }>>;
  };
  const names = document.tags.map((tag) => tag.name);
  assert.deepEqual(names, ["generation", "catalog", "lookup", "keys", "admin", "operations"]);
  for (const tag of document.tags) assert.ok(tag.description.length > 0, tag.name);
  const tagOf = (method: string, path: string) => {
    const tags = document.paths[path]?.[method]?.tags;
    assert.ok(
      tags !== undefined && tags.length === 1 && names.includes(tags[0]),
      `${method} ${path}: ${tags}`,
    );
    return tags[0];
  };
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of Object.keys(methods)) tagOf(method, path);
  }
  assert.equal(tagOf("post", "/api/v1/chat/completions"), "generation");
  assert.equal(tagOf("post", "/api/v1/messages/count_tokens"), "generation");
  assert.equal(tagOf("get", "/api/v1/models"), "catalog");
  assert.equal(tagOf("get", "/api/v1/generation"), "lookup");
  assert.equal(tagOf("get", "/api/v1/key"), "keys");
  assert.equal(tagOf("post", "/api/v1/playground-keys"), "keys");
  assert.equal(tagOf("post", "/internal/admin/workspaces"), "admin");
  assert.equal(tagOf("get", "/healthz"), "operations");
  assert.equal(tagOf("get", "/openapi.json"), "operations");
  assert.equal(tagOf("get", "/"), "operations");
});

test("GET / sends a browser to the console", async () => {
  const router = createRouter(createTable(), createLogger("silent"));
  assert.ok(router.allowedMethods("/").includes("GET"));
});
