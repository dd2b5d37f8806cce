import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { CanonicalRequest, ServerToolActivation } from "../../canonical/index.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { datetimeConfigSchema } from "../datetime/index.js";
import { pdfToolConfigSchema } from "../pdf/index.js";
import { webFetchConfigSchema } from "../web-fetch/index.js";
import { createServerTools } from "./create-server-tools.js";

const tools = createServerTools(
  { webFetch: webFetchConfigSchema.parse({}), datetime: datetimeConfigSchema.parse({}) },
  { env: {} },
);
after(() => tools.close());

function request(serverTools: ServerToolActivation[]): CanonicalRequest {
  return {
    model: "a/b",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [],
    sampling: {},
    serverTools,
    toolEvents: false,
    stream: false,
    passthrough: {},
  };
}

const activation = (
  id: ServerToolActivation["id"],
  parameters?: Record<string, unknown>,
  param = "plugins[0]",
) => ({
  id,
  maxUses: 1000,
  events: false,
  param,
  ...(parameters === undefined ? {} : { parameters }),
});

test("a pdf activation is accepted and offers the model no function: it applies to the file parts", () => {
  const session = tools.prepare(
    request([activation("pdf", { engine: "text" }), activation("datetime", undefined, "plugins[1]")]),
  );
  assert.deepEqual(
    session.definitions.map((definition) => definition.name),
    ["datetime"],
  );
  assert.equal(session.toolNamed("pdf"), undefined);
});

test("a malformed pdf activation is refused naming its field; image is not offered yet", () => {
  const refusal = (activations: ServerToolActivation[]) => {
    try {
      tools.prepare(request(activations));
    } catch (error) {
      assert.ok(error instanceof GatewayError);
      return [error.code, error.param];
    }
    assert.fail("expected a refusal");
  };
  assert.deepEqual(refusal([activation("pdf", { max_pages: 100_000 })]), [
    "invalid_request",
    "plugins[0].max_pages",
  ]);
  assert.deepEqual(refusal([activation("image")]), ["invalid_request", "plugins[0]"]);
});

test("the request's pdf page cap reaches web_fetch: its reservation counts that many pages at most", () => {
  const priced = createServerTools(
    {
      webFetch: webFetchConfigSchema.parse({}),
      datetime: datetimeConfigSchema.parse({}),
      pdf: pdfToolConfigSchema.parse({ price_per_page_usd: "0.001" }),
    },
    { env: {} },
  );
  after(() => priced.close());
  const capped = priced.prepare(
    request([activation("web_fetch"), activation("pdf", { max_pages: 5 }, "plugins[1]")]),
  );
  assert.equal(capped.maxCallCostMicroUsd("web_fetch"), 5 * 1_000);
  const uncapped = priced.prepare(request([activation("web_fetch")]));
  assert.equal(uncapped.maxCallCostMicroUsd("web_fetch"), 100 * 1_000);
});
