import assert from "node:assert/strict";
import { test } from "node:test";
import {
  describeImageOutcomeForModel,
  IMAGE_TOOL_DEFINITION,
  IMAGE_TOOL_NAME,
  parseImageToolArguments,
} from "./image-tool-definition.js";

test("the model sees a generate_image function with a required prompt and an optional size", () => {
  assert.equal(IMAGE_TOOL_DEFINITION.name, IMAGE_TOOL_NAME);
  assert.deepEqual(IMAGE_TOOL_DEFINITION.parameters?.required, ["prompt"]);
  const properties = IMAGE_TOOL_DEFINITION.parameters?.properties as Record<string, { enum?: string[] }>;
  assert.deepEqual(Object.keys(properties), ["prompt", "size"]);
  assert.deepEqual(properties.size.enum, ["1024x1024", "1536x1024", "1024x1536"]);
});

test("the model's arguments are read, and a bad call gets a message it can act on", () => {
  assert.deepEqual(parseImageToolArguments('{"prompt":"a fox","size":"1024x1536"}'), {
    ok: true,
    request: { prompt: "a fox", size: "1024x1536" },
  });
  assert.deepEqual(parseImageToolArguments('{"prompt":"a fox"}'), {
    ok: true,
    request: { prompt: "a fox", size: undefined },
  });
  for (const bad of ["", "{", "[]", '{"size":"1024x1024"}', '{"prompt":" "}', '{"prompt":"x","size":3}']) {
    const result = parseImageToolArguments(bad);
    assert.equal(result.ok, false, bad);
  }
});

test("the model gets a short description of the image, never the image", () => {
  const text = describeImageOutcomeForModel({
    ok: true,
    image: {
      base64: "iVBORw0KGgo".repeat(1000),
      mediaType: "image/png",
      width: 1024,
      height: 1536,
      requestedSize: "1024x1536",
      revisedPrompt: "a fox in snow",
      providerId: "openai",
      model: "gpt-image-1",
      costMicroUsd: 1,
      durationMs: 1,
    },
  });
  assert.equal(
    text,
    "Generated a 1024x1536 PNG image; it is shown to the user. The provider used this prompt: a fox in snow",
  );
  assert.equal(
    describeImageOutcomeForModel({
      ok: false,
      failure: { reason: "timeout", message: "The image provider did not answer within 1000 ms" },
    }),
    "Image generation failed: The image provider did not answer within 1000 ms.",
  );
});
