/**
 * With no OTLP endpoint set, tracing costs nothing: a gateway that serves generations and its
 * metrics loads no OpenTelemetry module at all, through `import` or `require`, and sends no
 * `traceparent` upstream. The gateway is imported only after a resolve hook that reports every
 * OpenTelemetry module is in place; the hook is shown to work at the end.
 */
import assert from "node:assert/strict";
import { createRequire, register } from "node:module";
import { test } from "node:test";
import { MessageChannel } from "node:worker_threads";

const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes("/@opentelemetry/")) port.postMessage(resolved.url);
  return resolved;
}
`;

const require = createRequire(import.meta.url);
const importedUrls: string[] = [];
const { port1, port2 } = new MessageChannel();
port1.on("message", (url: string) => importedUrls.push(url));
port1.unref();
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, {
  data: { port: port2 },
  transferList: [port2],
});

const requiredOpenTelemetry = () =>
  Object.keys(require.cache).filter((path) => path.includes("/@opentelemetry/"));

/** The hook reports from its own thread: give its messages time to arrive. */
async function settleMessages(until: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!until() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

test("tracing off: no OpenTelemetry module is loaded and no traceparent goes upstream", async () => {
  const { startTestGateway, TEST_MODEL } = await import("../helpers/test-gateway.js");
  const context = await startTestGateway("embedded");
  try {
    await context.openai.chat.completions.create(
      { model: TEST_MODEL, messages: [{ role: "user", content: "Hi" }] },
      { headers: { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` } },
    );
    const stream = await context.openai.chat.completions.create({
      model: TEST_MODEL,
      stream: true,
      messages: [{ role: "user", content: "Hi" }],
    });
    for await (const _chunk of stream) {
      // read to the end
    }
    const metrics = await fetch(`${context.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /hi_gateway_requests_total/);
    for (const request of context.upstream.requests) {
      assert.equal(request.headers.traceparent, undefined);
    }
  } finally {
    await context.close();
  }
  await settleMessages();
  assert.deepEqual(importedUrls, [], "an OpenTelemetry module was imported");
  assert.deepEqual(requiredOpenTelemetry(), [], "an OpenTelemetry module was required");

  // The two checks see OpenTelemetry modules when they are loaded.
  await import("@opentelemetry/api");
  await settleMessages(() => importedUrls.length > 0);
  assert.ok(importedUrls.some((url: string) => url.includes("/@opentelemetry/api/")));
  require("@opentelemetry/api");
  assert.ok(requiredOpenTelemetry().length > 0);
});
