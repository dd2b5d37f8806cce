/**
 * Conformance matrix, ingress format `messages`: every provider kind × every scenario × streaming
 * and non-streaming, through the official client (support/matrix.ts; docs/conformance.md).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PROVIDER_KINDS } from "../helpers/conformance-gateway.js";
import { scriptAnswer } from "../helpers/scenario-scripts.js";
import { FORMAT_DRIVERS } from "./support/format-drivers.js";
import { registerMatrix } from "./support/matrix.js";
import { parseSseFrames } from "./support/wire-tap.js";

const context = registerMatrix({
  format: "messages",
  todo: {},
});

test("messages stream framing: message_start is the first frame, as Anthropic sends it", async () => {
  const { gateway, clients, tap } = context();
  for (const kind of PROVIDER_KINDS) {
    const upstream = gateway.upstreams[kind];
    upstream.serve(scriptAnswer(kind, "text", { stream: true }));
    const mark = tap.exchanges.length;
    const outcome = await FORMAT_DRIVERS.messages.send(
      clients,
      { model: upstream.model, text: "Say hello" },
      true,
    );
    assert.equal(outcome.error, undefined);
    const [exchange] = tap.since(mark);
    const frames = parseSseFrames(await exchange.body);
    assert.equal(frames[0].event, "message_start", `${kind}: first event ${frames[0].event}`);
  }
});
