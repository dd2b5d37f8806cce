/**
 * Turns zod schemas into OpenAPI 3.1 schema objects (JSON Schema 2020-12) with zod 4's own
 * `z.toJSONSchema`. A schema named with `.meta({ id })` becomes one entry of
 * `components.schemas` and is referenced from everywhere it is used; the rest of its metadata
 * (description, example, enum) lands on the schema object. Schemas are read on their input side:
 * an object is open unless declared strict, and a field with a default is optional, which is
 * what a caller may send and what a client reading a response should expect.
 */
import { type ZodType, z } from "zod";

export type JsonSchema = Record<string, unknown>;

const COMPONENT_PREFIX = "#/components/schemas/";

export interface SchemaComponents {
  /** The schema object to place in the document: a `$ref` for a named schema. */
  convert(schema: ZodType): JsonSchema;
  /** Every named schema met so far, for `components.schemas`. */
  readonly schemas: Record<string, JsonSchema>;
}

export function createSchemaComponents(): SchemaComponents {
  const schemas: Record<string, JsonSchema> = {};
  return {
    schemas,
    convert(schema) {
      const converted = z.toJSONSchema(schema, {
        io: "input",
        unrepresentable: "any",
        override: ({ zodSchema, jsonSchema }) => {
          dropSafeIntegerBounds(jsonSchema);
          describeDiscriminator(zodSchema as unknown as ZodType, jsonSchema);
        },
      }) as JsonSchema;
      const { $schema: _dialect, $defs, ...root } = pointAtComponents(converted);
      Object.assign(schemas, $defs as Record<string, JsonSchema> | undefined);
      return root;
    },
  };
}

/** `z.int()` says "a safe integer" with bounds no reader needs; an integer is what it documents. */
function dropSafeIntegerBounds(schema: JsonSchema): void {
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
}

/**
 * A discriminated union gets OpenAPI's `discriminator`: the field that selects the variant and,
 * when every variant is named, which value selects which.
 */
function describeDiscriminator(schema: ZodType, json: JsonSchema): void {
  const def = schema._zod.def as { type: string; discriminator?: string; options?: ZodType[] };
  if (def.type !== "union" || def.discriminator === undefined || def.options === undefined) return;
  const propertyName = def.discriminator;
  const mapping: Record<string, string> = {};
  for (const option of def.options) {
    const id = z.globalRegistry.get(option)?.id;
    const field = (option as unknown as { shape?: Record<string, ZodType> }).shape?.[propertyName];
    const values = field?._zod.values;
    if (id === undefined || values === undefined) {
      json.discriminator = { propertyName };
      return;
    }
    for (const value of values) mapping[String(value)] = `${COMPONENT_PREFIX}${id}`;
  }
  json.discriminator = { propertyName, mapping };
}

/** Rewrites the converter's local `#/$defs/` references to the document's components. */
function pointAtComponents(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', `"${COMPONENT_PREFIX}`)) as JsonSchema;
}
