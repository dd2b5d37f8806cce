/**
 * The JSON Schema that /openapi.json publishes for named wire schemas (`.meta({ id })`), read
 * with zod 4's own converter as the document does. A property that may also be null is shown by its
 * non-null side, so tests can read its enum or bounds directly.
 */
import { type ZodType, z } from "zod";

export interface GeneratedSchema {
  properties: Record<string, { enum?: unknown[]; maximum?: number; minimum?: number; description?: string }>;
  required?: string[];
  additionalProperties?: unknown;
}

export function describeSchemas(schemas: readonly ZodType[]): Record<string, GeneratedSchema> {
  const named: Record<string, GeneratedSchema> = {};
  for (const schema of schemas) {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
      $defs?: Record<string, GeneratedSchema>;
    };
    Object.assign(named, json.$defs);
  }
  for (const schema of Object.values(named)) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      schema.properties[name] = withoutNull(property as Record<string, unknown>);
    }
  }
  return named;
}

function withoutNull(property: Record<string, unknown>): GeneratedSchema["properties"][string] {
  const options = property.anyOf;
  if (!Array.isArray(options)) return property;
  const nonNull = options.filter((option: { type?: unknown }) => option.type !== "null");
  if (nonNull.length !== 1) return property;
  const { anyOf: _options, ...rest } = property;
  return { ...nonNull[0], ...rest };
}
