/**
 * A provider whose `api_key_env` is unset: its routes are never called. A model with another
 * route that has its key is served by that route; a model with no such route fails at once with
 * `provider_auth` naming the variable to set, in the caller's format, and nothing reaches the
 * upstream.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestConfigFile, startTestGateway, type TestGateway } from "../helpers/test-gateway.js";

const UNSET_VARIABLE = "HI_TEST_PROVIDER_KEY_NEVER_SET";
const STRANDED = "test/stranded-model";
const MIXED = "test/mixed-model";
let context: TestGateway;

before(async () => {
  delete process.env[UNSET_VARIABLE];
  context = await startTestGateway("embedded", {
    configOverrides: (baseUrl) => {
      const file = createTestConfigFile(baseUrl);
      const [fake] = file.providers;
      const [model] = file.models;
      return {
        providers: [fake, Object.assign({}, fake, { id: "keyless", api_key_env: UNSET_VARIABLE })],
        models: [
          Object.assign({}, model, {
            slug: STRANDED,
            name: STRANDED,
            routes: [{ provider: "keyless", model: "m" }],
          }),
          Object.assign({}, model, {
            slug: MIXED,
            name: MIXED,
            routes: [
              { provider: "keyless", model: "never-called" },
              { provider: "fake", model: "keyed-model" },
            ],
          }),
        ],
      };
    },
  });
});
after(() => context.close());

function post(path: string, body: unknown) {
  return fetch(`${context.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${context.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const FORMATS = [
  {
    name: "chat",
    path: "/api/v1/chat/completions",
    body: (model: string, stream: boolean) => ({
      model,
      stream,
      messages: [{ role: "user", content: "hi" }],
    }),
  },
  {
    name: "responses",
    path: "/api/v1/responses",
    body: (model: string, stream: boolean) => ({ model, stream, input: "hi" }),
  },
  {
    name: "messages",
    path: "/api/v1/messages",
    body: (model: string, stream: boolean) => ({
      model,
      stream,
      max_tokens: 64,
      messages: [{ role: "user", content: "hi" }],
    }),
  },
] as const;

test("a model whose only provider has no key: provider_auth naming the variable, in each format, nothing sent", async () => {
  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      const response = await post(format.path, format.body(STRANDED, stream));
      const label = `${format.name} stream=${stream}`;
      assert.equal(response.status, 502, label);
      assert.equal(response.headers.get("retry-after"), null, `${label}: retrying cannot help`);
      const body = (await response.json()) as {
        type?: string;
        error: { code: string; type: string; message: string };
      };
      assert.equal(body.error.code, "provider_auth", label);
      if (format.name === "messages") assert.equal(body.type, "error", label);
      else assert.equal(body.error.type, "api_error", label);
      assert.ok(body.error.message.includes(UNSET_VARIABLE), `${label}: ${body.error.message}`);
      assert.match(body.error.message, /provider "keyless"/);
      assert.match(body.error.message, /Nothing was sent upstream/);
    }
  }
  assert.equal(context.upstream.requests.length, 0, "no request reached the upstream");
});

test("a model with another route that has its key is served by that route", async () => {
  for (const format of FORMATS) {
    const response = await post(format.path, format.body(MIXED, false));
    assert.equal(response.status, 200, `${format.name}: ${await response.clone().text()}`);
    await response.arrayBuffer();
  }
  assert.deepEqual(
    context.upstream.requests.map((request) => (request.body as { model: string }).model),
    ["keyed-model", "keyed-model", "keyed-model"],
  );
});
