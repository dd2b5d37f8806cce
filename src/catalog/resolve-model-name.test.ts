import assert from "node:assert/strict";
import { test } from "node:test";
import type { GatewayConfig } from "../config/gateway-config.js";
import { buildConfig } from "../config/load-config.js";
import { GatewayError } from "../errors/gateway-error.js";
import { resolveModelName } from "./resolve-model-name.js";
import { measureEditDistance } from "./suggest-model-names.js";

const provider = { id: "p", kind: "openai-compatible", base_url: "http://127.0.0.1:1/v1" };

function model(slug: string, extra: Record<string, unknown> = {}) {
  return {
    slug,
    name: slug,
    provider: { slug: slug.split("/")[0], name: "Creator" },
    description: "",
    context_length: 1000,
    max_output_tokens: 100,
    pricing: { prompt: 1, completion: 2 },
    features: [],
    datacenter_locations: [],
    routes: [{ provider: "p", model: slug.split("/")[1] }],
    ...extra,
  };
}

/** A catalog shaped like the shipped one: dotted slugs, the providers' dashed ids, snapshots. */
function createCatalog(): GatewayConfig {
  return buildConfig(
    {
      providers: [provider],
      models: [
        model("anthropic/claude-sonnet-4.5", {
          aliases: ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"],
          family: "claude-sonnet",
          release_date: "2025-09-29",
        }),
        model("anthropic/claude-sonnet-5.5", {
          aliases: ["claude-sonnet-5-5"],
          family: "claude-sonnet",
          release_date: "2026-09-28",
        }),
        model("anthropic/claude-opus-4.8", {
          aliases: ["claude-opus-4-8"],
          family: "claude-opus",
          release_date: "2026-05-28",
        }),
        // Listed after 4.8 but newer: the family's newest is found by date, not by position.
        model("anthropic/claude-opus-5.5", {
          aliases: ["claude-opus-5-5"],
          family: "claude-opus",
          release_date: "2026-09-22",
        }),
        model("openai/gpt-5", { aliases: ["gpt-5-2025-08-07"], release_date: "2025-08-07" }),
        model("openai/gpt-6.2-sol", { aliases: ["gpt-6-2-sol"], release_date: "2026-11-17" }),
        // Two creators serve a model of the same name: its bare name is ambiguous.
        model("openai/gpt-oss-120b"),
        model("groq/gpt-oss-120b"),
      ],
      aliases: {
        opus: { family: "claude-opus" },
        sonnet: { family: "claude-sonnet" },
        "my-default": "openai/gpt-6.2-sol",
      },
    },
    {},
  );
}

const catalog = createCatalog();
const resolve = (name: string) => resolveModelName(catalog.modelNames, name, "model").slug;

function refusal(name: string, param = "model"): GatewayError {
  try {
    resolveModelName(catalog.modelNames, name, param);
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail(`"${name}" resolved`);
}

test("an exact slug resolves to itself", () => {
  assert.equal(resolve("anthropic/claude-sonnet-4.5"), "anthropic/claude-sonnet-4.5");
  assert.equal(resolve("openai/gpt-oss-120b"), "openai/gpt-oss-120b");
});

test("a bare name resolves by its slug's model part when one model has it", () => {
  assert.equal(resolve("gpt-5"), "openai/gpt-5");
  assert.equal(resolve("gpt-6.2-sol"), "openai/gpt-6.2-sol");
  assert.equal(resolve("claude-sonnet-4.5"), "anthropic/claude-sonnet-4.5");
});

test("a provider's own id, its dashed spelling and <creator>/<alias> resolve as aliases", () => {
  assert.equal(resolve("claude-sonnet-4-5"), "anthropic/claude-sonnet-4.5");
  assert.equal(resolve("gpt-6-2-sol"), "openai/gpt-6.2-sol");
  assert.equal(resolve("anthropic/claude-sonnet-4-5"), "anthropic/claude-sonnet-4.5");
  assert.equal(resolve("openai/gpt-6-2-sol"), "openai/gpt-6.2-sol");
});

test("dated snapshots resolve to their model", () => {
  assert.equal(resolve("claude-sonnet-4-5-20250929"), "anthropic/claude-sonnet-4.5");
  assert.equal(resolve("gpt-5-2025-08-07"), "openai/gpt-5");
});

test("family names resolve to the family's newest model by release date, and an exact id stays exact", () => {
  assert.equal(resolve("opus"), "anthropic/claude-opus-5.5");
  assert.equal(resolve("sonnet"), "anthropic/claude-sonnet-5.5");
  // Claude Code's own ids for its picks name one model each.
  assert.equal(resolve("claude-opus-5-5"), "anthropic/claude-opus-5.5");
  assert.equal(resolve("claude-opus-4-8"), "anthropic/claude-opus-4.8");
  assert.equal(resolve("my-default"), "openai/gpt-6.2-sol");
});

test("the operator's names are listed with the model each stands for", () => {
  const opus = catalog.modelsBySlug.get("anthropic/claude-opus-5.5");
  assert.deepEqual(opus?.aliases, ["claude-opus-5-5", "opus"]);
  assert.deepEqual(catalog.modelsBySlug.get("anthropic/claude-opus-4.8")?.aliases, ["claude-opus-4-8"]);
});

test("an ambiguous bare name is invalid_request listing the slugs it could mean", () => {
  const error = refusal("gpt-oss-120b");
  assert.equal(error.code, "invalid_request");
  assert.equal(error.status, 400);
  assert.equal(error.param, "model");
  assert.match(error.message, /ambiguous/);
  assert.match(error.message, /openai\/gpt-oss-120b, groq\/gpt-oss-120b/);
});

test("an unknown name is invalid_request naming the field, with the closest catalog names", () => {
  const error = refusal("claude-sonnet-4-6", "models[1]");
  assert.equal(error.code, "invalid_request");
  assert.equal(error.param, "models[1]");
  assert.match(error.message, /^Unknown model "claude-sonnet-4-6"/);
  // The closest names first, each with the slug it stands for.
  assert.match(error.message, /closest catalog names: claude-sonnet-4-5 \(anthropic\/claude-sonnet-4\.5\)/);
  assert.match(error.message, /claude-sonnet-5-5 \(anthropic\/claude-sonnet-5\.5\)/);
  assert.match(
    refusal("GPT-6.2-SOL").message,
    /closest catalog names: gpt-6\.2-sol \(openai\/gpt-6\.2-sol\)/,
  );
  assert.match(refusal("gpt-oss-12b").message, /gpt-oss-120b \(openai\/gpt-oss-120b, groq\/gpt-oss-120b\)/);
});

test("names are exact: case, spaces and trailing slashes are not normalised", () => {
  for (const name of ["Anthropic/claude-sonnet-4.5", " gpt-5", "gpt-5 ", "openai/gpt-5/", "OPUS"]) {
    assert.equal(refusal(name).code, "invalid_request", name);
  }
});

test("a huge unknown name is refused with a bounded message", () => {
  const error = refusal("x".repeat(1_000_000));
  assert.ok(error.message.length < 1000, `message of ${error.message.length} characters`);
});

test("edit distance counts insertions, deletions and substitutions", () => {
  assert.equal(measureEditDistance("", "abc"), 3);
  assert.equal(measureEditDistance("abc", "abc"), 0);
  assert.equal(measureEditDistance("kitten", "sitting"), 3);
  assert.equal(measureEditDistance("claude-sonnet-4-6", "claude-sonnet-4-5"), 1);
});
