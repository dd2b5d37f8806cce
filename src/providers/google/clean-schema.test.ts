import assert from "node:assert/strict";
import { test } from "node:test";
import {
  cleanSchemaForGemini,
  createSchemaBudget,
  MAX_CLEANED_SCHEMA_NODES,
  SchemaTooLargeError,
} from "./clean-schema.js";

/** The value at a path of object keys. */
function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) current = (current as Record<string, unknown> | undefined)?.[key];
  return current;
}

/** Every keyword anywhere in a cleaned schema (property names excluded). */
function keywordsOf(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) keywordsOf(item, found);
  else if (typeof schema === "object" && schema !== null) {
    for (const [key, value] of Object.entries(schema)) {
      found.add(key);
      if (key === "properties")
        for (const property of Object.values(value as object)) keywordsOf(property, found);
      else if (key !== "enum" && key !== "required" && key !== "propertyOrdering") keywordsOf(value, found);
    }
  }
  return found;
}

const ALLOWED = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "properties",
  "required",
  "propertyOrdering",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "minimum",
  "maximum",
  "anyOf",
]);

test("keeps the allowlisted keywords unchanged", () => {
  const schema = {
    type: "object",
    title: "Search",
    description: "Search the web",
    properties: {
      query: { type: "string", description: "what to look for", minLength: 1, maxLength: 200 },
      limit: { type: "integer", format: "int32", minimum: 1, maximum: 50 },
      score: { type: "number", format: "double" },
      when: { type: "string", format: "date-time" },
      tags: { type: "array", items: { type: "string" }, minItems: 0, maxItems: 5 },
      mode: { type: "string", enum: ["fast", "deep"] },
      extra: { type: "object", properties: { a: { type: "boolean" } }, minProperties: 1, maxProperties: 3 },
    },
    required: ["query"],
    propertyOrdering: ["query", "limit"],
  };
  assert.deepEqual(cleanSchemaForGemini(schema), schema);
});

test("drops keywords Gemini rejects, at every depth, and reports them", () => {
  const dropped: string[] = [];
  const cleaned = cleanSchemaForGemini(
    {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "urn:x",
      type: "object",
      additionalProperties: false,
      properties: {
        tags: {
          type: "array",
          uniqueItems: true,
          items: { type: "string", pattern: "^[a-z]+$", examples: ["a"] },
        },
        labels: { type: "object", propertyNames: { pattern: "^x" }, patternProperties: { "^x": {} } },
        count: { type: "integer", default: 3, exclusiveMinimum: 0, multipleOf: 2 },
        url: { type: "string", format: "uri" },
        email: { type: "string", format: "email" },
        // Built from text: a literal object with a `then` key is a thenable to linters.
        choice: JSON.parse('{"not": {"type": "null"}, "if": {}, "then": {}, "else": {}}'),
      },
    },
    { onDrop: (path) => dropped.push(path) },
  );
  assert.deepEqual(cleaned, {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string" } },
      labels: { type: "object" },
      count: { type: "integer" },
      url: { type: "string" },
      email: { type: "string" },
      choice: {},
    },
  });
  for (const keyword of keywordsOf(cleaned)) assert.ok(ALLOWED.has(keyword), keyword);
  assert.deepEqual(dropped.sort(), [
    "$id",
    "$schema",
    "additionalProperties",
    "properties.choice.else",
    "properties.choice.if",
    "properties.choice.not",
    "properties.choice.then",
    "properties.count.default",
    "properties.count.exclusiveMinimum",
    "properties.count.multipleOf",
    "properties.email.format",
    "properties.labels.patternProperties",
    "properties.labels.propertyNames",
    "properties.tags.items.examples",
    "properties.tags.items.pattern",
    "properties.tags.uniqueItems",
    "properties.url.format",
  ]);
});

test("resolves local $ref / $defs / definitions inline, siblings win", () => {
  const cleaned = cleanSchemaForGemini({
    $defs: {
      Address: {
        type: "object",
        description: "postal address",
        properties: { city: { type: "string" }, zip: { $ref: "#/definitions/Zip" } },
        required: ["city"],
      },
    },
    definitions: { Zip: { type: "string", description: "zip code" } },
    type: "object",
    properties: {
      home: { $ref: "#/$defs/Address", description: "where they live" },
      work: { $ref: "#/$defs/Address" },
    },
  });
  const address = {
    type: "object",
    properties: { city: { type: "string" }, zip: { type: "string", description: "zip code" } },
    required: ["city"],
  };
  assert.deepEqual(cleaned, {
    type: "object",
    properties: {
      home: { ...address, description: "where they live" },
      work: { ...address, description: "postal address" },
    },
  });
  assert.ok(!JSON.stringify(cleaned).includes("$ref"));
});

test("a recursive $ref is expanded a bounded number of times, then cut to its type", () => {
  const cleaned = cleanSchemaForGemini({
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        type: "object",
        description: "tree node",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/Node" } },
        },
      },
    },
  });
  const level2 = at(cleaned, "properties", "children", "items");
  const level3 = at(level2, "properties", "children", "items");
  assert.equal(at(level2, "type"), "object");
  assert.deepEqual(level3, { type: "object", description: "tree node" });
  assert.ok(JSON.stringify(cleaned).length < 1000);
});

test("an unresolvable or remote $ref is dropped, keeping its siblings", () => {
  const dropped: string[] = [];
  const cleaned = cleanSchemaForGemini(
    {
      type: "object",
      properties: {
        a: { $ref: "https://example.com/schema.json", description: "remote" },
        b: { $ref: "#/$defs/Missing" },
      },
    },
    { onDrop: (path) => dropped.push(path) },
  );
  assert.deepEqual(cleaned, { type: "object", properties: { a: { description: "remote" }, b: {} } });
  assert.deepEqual(dropped, ["properties.a.$ref", "properties.b.$ref"]);
});

test("nullable: type arrays, anyOf with null, enum with null", () => {
  assert.deepEqual(cleanSchemaForGemini({ type: ["string", "null"], description: "d" }), {
    type: "string",
    description: "d",
    nullable: true,
  });
  // pydantic's Optional[int]
  assert.deepEqual(
    cleanSchemaForGemini({ anyOf: [{ type: "integer" }, { type: "null" }], default: null, title: "Limit" }),
    { type: "integer", title: "Limit", nullable: true },
  );
  assert.deepEqual(cleanSchemaForGemini({ type: "string", enum: ["a", "b", null] }), {
    type: "string",
    enum: ["a", "b"],
    nullable: true,
  });
});

test("several types become anyOf; oneOf becomes anyOf", () => {
  assert.deepEqual(cleanSchemaForGemini({ type: ["string", "number"] }), {
    anyOf: [{ type: "string" }, { type: "number" }],
  });
  assert.deepEqual(
    cleanSchemaForGemini({
      oneOf: [{ type: "string" }, { type: "object", properties: { x: { type: "number" } } }],
    }),
    { anyOf: [{ type: "string" }, { type: "object", properties: { x: { type: "number" } } }] },
  );
  assert.deepEqual(
    cleanSchemaForGemini({ anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] }),
    {
      anyOf: [{ type: "string" }, { type: "integer" }],
      nullable: true,
    },
  );
});

test("allOf members are merged", () => {
  assert.deepEqual(
    cleanSchemaForGemini({
      description: "merged",
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { type: "integer" } }, required: ["b"], additionalProperties: false },
      ],
    }),
    {
      description: "merged",
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
      required: ["a", "b"],
    },
  );
});

test("const becomes a one-value enum; non-string enums and consts are dropped", () => {
  assert.deepEqual(cleanSchemaForGemini({ const: "fixed" }), { type: "string", enum: ["fixed"] });
  assert.deepEqual(cleanSchemaForGemini({ type: "integer", enum: [1, 2, 3] }), { type: "integer" });
  assert.deepEqual(cleanSchemaForGemini({ enum: ["a", 1] }), {});
  assert.deepEqual(cleanSchemaForGemini({ type: "boolean", const: true }), { type: "boolean" });
  // An enum alone says its type: Gemini wants `type: string` with every enum.
  assert.deepEqual(cleanSchemaForGemini({ enum: ["x", "y"] }), { type: "string", enum: ["x", "y"] });
});

test("required and propertyOrdering keep only existing properties; empty properties disappear", () => {
  assert.deepEqual(
    cleanSchemaForGemini({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a", "ghost", "a"],
      propertyOrdering: ["ghost", "a"],
    }),
    { type: "object", properties: { a: { type: "string" } }, required: ["a"], propertyOrdering: ["a"] },
  );
  assert.deepEqual(cleanSchemaForGemini({ type: "object", properties: {}, required: ["x"] }), {
    type: "object",
  });
});

test("missing types are inferred from properties and items; tuples become anyOf items", () => {
  assert.deepEqual(cleanSchemaForGemini({ properties: { a: { type: "string" } } }), {
    type: "object",
    properties: { a: { type: "string" } },
  });
  assert.deepEqual(cleanSchemaForGemini({ items: { type: "number" } }), {
    type: "array",
    items: { type: "number" },
  });
  assert.deepEqual(
    cleanSchemaForGemini({ type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] }),
    {
      type: "array",
      items: { anyOf: [{ type: "string" }, { type: "integer" }] },
    },
  );
});

test("a large MCP-style tool schema comes out with allowlisted keywords only", () => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    additionalProperties: false,
    definitions: {
      Edit: {
        type: "object",
        properties: { oldText: { type: "string" }, newText: { type: "string" } },
        required: ["oldText", "newText"],
        additionalProperties: false,
      },
    },
    properties: {
      path: { type: "string", format: "uri-reference" },
      edits: { type: "array", items: { $ref: "#/definitions/Edit" }, uniqueItems: true },
      dryRun: { type: "boolean", default: false, description: "Preview changes" },
      mode: { anyOf: [{ const: "a" }, { const: "b" }] },
      meta: { type: "object", additionalProperties: { type: "string" } },
    },
    required: ["path", "edits"],
  };
  const cleaned = cleanSchemaForGemini(schema);
  for (const keyword of keywordsOf(cleaned)) assert.ok(ALLOWED.has(keyword), keyword);
  assert.deepEqual(at(cleaned, "properties", "edits", "items"), {
    type: "object",
    properties: { oldText: { type: "string" }, newText: { type: "string" } },
    required: ["oldText", "newText"],
  });
  assert.deepEqual(at(cleaned, "properties", "mode"), {
    anyOf: [
      { type: "string", enum: ["a"] },
      { type: "string", enum: ["b"] },
    ],
  });
  assert.deepEqual(cleaned.required, ["path", "edits"]);
});

test("never throws on nonsense and never recurses without bound", () => {
  assert.deepEqual(cleanSchemaForGemini(undefined), {});
  assert.deepEqual(cleanSchemaForGemini("string"), {});
  assert.deepEqual(cleanSchemaForGemini({ type: 42, properties: [], items: "x", required: "a" }), {});
  assert.deepEqual(cleanSchemaForGemini({ $ref: "#", description: "self" }).description, "self");
  let deep: Record<string, unknown> = { type: "string" };
  for (let level = 0; level < 500; level += 1) deep = { type: "object", properties: { next: deep } };
  assert.doesNotThrow(() => cleanSchemaForGemini(deep));
});

test("the input is not modified", () => {
  const schema = {
    type: "object",
    additionalProperties: false,
    properties: { a: { $ref: "#/$defs/A" } },
    $defs: { A: { type: "string" } },
  };
  const copy = structuredClone(schema);
  cleanSchemaForGemini(schema);
  assert.deepEqual(schema, copy);
});

test("an anyOf whose alternative accepts anything is void and dropped (MCP 'one of these required')", () => {
  const dropped: string[] = [];
  const cleaned = cleanSchemaForGemini(
    {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" } },
      anyOf: [{ required: ["a"] }, { required: ["b"] }],
    },
    { onDrop: (path) => dropped.push(path) },
  );
  assert.deepEqual(cleaned, { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } });
  assert.deepEqual(dropped, ["anyOf"]);
});

test("references that name nothing are dropped: malformed escapes, inherited names", () => {
  const drops: string[] = [];
  const cleaned = cleanSchemaForGemini(
    {
      type: "object",
      properties: {
        a: { $ref: "#/$defs/%E0%A4%A" },
        b: { $ref: "#/__proto__" },
        c: { $ref: "#/$defs/constructor" },
      },
      $defs: {},
    },
    { onDrop: (path) => drops.push(path) },
  );
  assert.deepEqual(cleaned.properties, { a: {}, b: {}, c: {} });
  assert.deepEqual(drops.sort(), ["properties.a.$ref", "properties.b.$ref", "properties.c.$ref"]);
});

test("inlining is bounded: an exponential schema is refused, a request's schemas share one budget", () => {
  const definitions: Record<string, unknown> = {};
  for (let level = 0; level < 40; level++) {
    const next = level === 39 ? "#" : `#/$defs/d${level + 1}`;
    definitions[`d${level}`] = { type: "object", properties: { l: { $ref: next }, r: { $ref: next } } };
  }
  const started = performance.now();
  assert.throws(() => cleanSchemaForGemini({ $ref: "#/$defs/d0", $defs: definitions }), SchemaTooLargeError);
  assert.ok(performance.now() - started < 1_000, "refused within the budget, not after 2^40 copies");
  // A schema well within the budget alone passes; enough of them on one budget do not.
  const wide = {
    type: "object",
    properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, { type: "string" }])),
  };
  const budget = createSchemaBudget();
  let cleaned = 0;
  assert.throws(() => {
    for (;;) {
      cleanSchemaForGemini(wide, { budget });
      cleaned++;
    }
  }, SchemaTooLargeError);
  assert.ok(cleaned >= 10 && cleaned <= MAX_CLEANED_SCHEMA_NODES / 500, `${cleaned} schemas`);
});
