import assert from "node:assert/strict";
import { test } from "node:test";
import {
  IMAGE_TOOL_DEFAULTS,
  imageToolConfigSchema,
  priceImage,
  resolveImageToolSettings,
} from "./image-config.js";

test("a minimal provider gets the public base URL, the defaults and an exact price", () => {
  const file = imageToolConfigSchema.parse({
    providers: [
      {
        id: "openai",
        kind: "openai",
        api_key_env: "OPENAI_API_KEY",
        model: "gpt-image-1",
        price_per_image_usd: "0.011",
      },
    ],
  });
  const settings = resolveImageToolSettings(file, { OPENAI_API_KEY: "sk-1" });
  assert.equal(settings.maxPromptChars, IMAGE_TOOL_DEFAULTS.maxPromptChars);
  const [provider] = settings.providers;
  assert.equal(provider.baseUrl, "https://api.openai.com/v1");
  assert.equal(provider.apiKey, "sk-1");
  assert.equal(provider.timeoutMs, 120_000);
  assert.equal(provider.defaultSize, "1024x1024");
  assert.equal(provider.pricePerImageMicroUsd, 11_000);
  assert.equal(priceImage(provider, "1536x1024"), 11_000);

  const gemini = resolveImageToolSettings(
    imageToolConfigSchema.parse({
      providers: [
        {
          id: "g",
          kind: "gemini",
          model: "gemini-2.5-flash-image",
          price_per_image_usd: 0.039,
          base_url: "http://127.0.0.1:9/v1beta/",
        },
      ],
    }),
    {},
  ).providers[0];
  assert.equal(gemini.baseUrl, "http://127.0.0.1:9/v1beta");
  assert.equal(gemini.apiKey, undefined);
});

test("bad provider entries are refused with the field's path", () => {
  const valid = { id: "a", kind: "openai", model: "gpt-image-1", price_per_image_usd: "0.04" };
  const cases: Array<[unknown, string]> = [
    [{ providers: [] }, "providers"],
    [{ providers: [{ ...valid, price_per_image_usd: "0.0000001" }] }, "providers.0.price_per_image_usd"],
    [{ providers: [{ ...valid, price_per_image_usd: undefined }] }, "providers.0.price_per_image_usd"],
    [
      { providers: [{ ...valid, price_per_image_usd_by_size: { "800x600": "1" } }] },
      "providers.0.price_per_image_usd_by_size",
    ],
    [{ providers: [{ ...valid, kind: "gemini", quality: "low" }] }, "providers.0.quality"],
    [{ providers: [{ ...valid, kind: "dalle" }] }, "providers.0.kind"],
    [{ providers: [{ ...valid, api_key_env: "lower" }] }, "providers.0.api_key_env"],
    [{ providers: [valid, valid] }, "providers.1.id"],
    [{ providers: [{ ...valid, base_url: "ftp://x" }] }, "providers.0.base_url"],
  ];
  for (const [file, path] of cases) {
    const result = imageToolConfigSchema.safeParse(file);
    assert.equal(result.success, false, JSON.stringify(file));
    assert.equal(result.error?.issues[0].path.join("."), path, JSON.stringify(result.error?.issues));
  }
});
