import assert from "node:assert/strict";
import { test } from "node:test";
import type { ServerToolResult } from "../../canonical/index.js";
import { createToolEndedPayload } from "./tool-event-payload.js";

function imageResult(bytes: number): ServerToolResult {
  return {
    callId: "c1",
    tool: "image",
    input: { prompt: "a fox" },
    status: "completed",
    output: {
      kind: "image",
      base64: Buffer.alloc(bytes, 7).toString("base64"),
      mediaType: "image/webp",
      size: "1024x1536",
      provider: "openai",
      model: "gpt-image-1",
    },
    costMicroUsd: 63_000,
    durationMs: 900,
    events: true,
  };
}

test("an image call's event summarises the image (type, size, bytes) and never carries its data", () => {
  // Lengths whose base64 ends with no, one and two padding characters.
  for (const bytes of [3000, 3001, 3002]) {
    const result = imageResult(bytes);
    const payload = createToolEndedPayload(result, "ig_c1");
    assert.deepEqual(payload, {
      tool: "image",
      phase: "completed",
      call_id: "ig_c1",
      input: { prompt: "a fox" },
      output: { media_type: "image/webp", size: "1024x1536", bytes },
      cost_micro_usd: 63_000,
      duration_ms: 900,
    });
    const base64 = result.output?.kind === "image" ? result.output.base64 : "";
    assert.ok(!JSON.stringify(payload).includes(base64.slice(0, 64)));
  }
});
