/**
 * A small validator for checking our wire objects against a published OpenAPI 3.x document (OpenAI's
 * `openai-openapi.yaml` in test/fixtures/specs): e.g. that a responses body validates against its
 * `Response` schema, or a chat body against `CreateChatCompletionResponse`.
 *
 * It covers what those documents use: `$ref` (local JSON pointers), `allOf`, `anyOf`, `oneOf` (with
 * `discriminator`), `type` (also arrays and `"null"`), OpenAPI 3.0 `nullable`, `enum`, `const`,
 * `required`, `properties`, `additionalProperties`, `items`, numeric and length bounds and `pattern`.
 * `format` and annotations are ignored. Violations are strings `"<path>: <what is wrong>"`, with the
 * path in JavaScript notation from `$`.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { OPENAI_OPENAPI_PATH } from "./fixture-paths.js";

type Schema = Record<string, unknown>;

export interface OpenApiValidator {
  /** Violations of `value` against `components.schemas[schemaName]`; empty when it is valid. */
  validate(schemaName: string, value: unknown): string[];
}

const validators = new Map<string, OpenApiValidator>();

/** Parses the document once per process. */
export function loadOpenApiValidator(path: string = OPENAI_OPENAPI_PATH): OpenApiValidator {
  let validator = validators.get(path);
  if (validator === undefined) {
    validator = createOpenApiValidator(parse(readFileSync(path, "utf8")));
    validators.set(path, validator);
  }
  return validator;
}

export function createOpenApiValidator(document: unknown): OpenApiValidator {
  const checker = new SchemaChecker(document);
  return {
    validate(schemaName, value) {
      const violations: string[] = [];
      checker.check({ $ref: `#/components/schemas/${schemaName}` }, value, "$", violations);
      return violations;
    },
  };
}

class SchemaChecker {
  constructor(private readonly document: unknown) {}

  check(schema: unknown, value: unknown, path: string, out: string[]): void {
    if (schema === true || schema === undefined) return;
    if (schema === false) {
      out.push(`${path}: no value is allowed here`);
      return;
    }
    if (!isObject(schema)) return;
    if (typeof schema.$ref === "string") this.check(this.resolve(schema.$ref), value, path, out);
    if (value === null && schema.nullable === true) return;
    if (Array.isArray(schema.allOf)) for (const part of schema.allOf) this.check(part, value, path, out);
    if (Array.isArray(schema.anyOf)) this.checkAnyOf(schema.anyOf, value, path, out);
    if (Array.isArray(schema.oneOf)) this.checkOneOf(schema, schema.oneOf, value, path, out);
    if (schema.type !== undefined && !matchesType(schema.type, value)) {
      out.push(`${path}: expected ${JSON.stringify(schema.type)}, got ${describeValue(value)}`);
      return;
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((option) => isDeepEqual(option, value))) {
      out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    }
    if ("const" in schema && !isDeepEqual(schema.const, value)) {
      out.push(`${path}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
    }
    if (typeof value === "number") checkNumber(schema, value, path, out);
    if (typeof value === "string") checkString(schema, value, path, out);
    if (Array.isArray(value)) this.checkArray(schema, value, path, out);
    else if (isObject(value)) this.checkObject(schema, value, path, out);
  }

  private checkAnyOf(branches: unknown[], value: unknown, path: string, out: string[]): void {
    const results = branches.map((branch) => this.collect(branch, value, path));
    if (results.some((violations) => violations.length === 0)) return;
    out.push(`${path}: matches none of anyOf; closest branch says:`, ...closest(results));
  }

  private checkOneOf(schema: Schema, branches: unknown[], value: unknown, path: string, out: string[]): void {
    const discriminator = isObject(schema.discriminator) ? schema.discriminator : undefined;
    const propertyName =
      typeof discriminator?.propertyName === "string" ? discriminator.propertyName : undefined;
    if (propertyName !== undefined && isObject(value)) {
      const tag = value[propertyName];
      const candidates = branches.filter((branch) => this.readTags(branch, propertyName).includes(tag));
      if (candidates.length === 0) {
        out.push(`${path}.${propertyName}: ${JSON.stringify(tag)} matches no oneOf branch`);
        return;
      }
      this.checkAnyOf(candidates, value, path, out);
      return;
    }
    const results = branches.map((branch) => this.collect(branch, value, path));
    const matching = results.filter((violations) => violations.length === 0).length;
    if (matching === 1) return;
    if (matching === 0) out.push(`${path}: matches none of oneOf; closest branch says:`, ...closest(results));
    else out.push(`${path}: matches ${matching} branches of oneOf, expected exactly one`);
  }

  private checkArray(schema: Schema, value: unknown[], path: string, out: string[]): void {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      out.push(`${path}: expected at least ${schema.minItems} items, got ${value.length}`);
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      out.push(`${path}: expected at most ${schema.maxItems} items, got ${value.length}`);
    }
    if (schema.items !== undefined) {
      for (const [index, item] of value.entries()) this.check(schema.items, item, `${path}[${index}]`, out);
    }
  }

  private checkObject(schema: Schema, value: Schema, path: string, out: string[]): void {
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === "string" && !(name in value))
          out.push(`${path}: missing required property ${name}`);
      }
    }
    for (const [name, propertyValue] of Object.entries(value)) {
      if (name in properties) this.check(properties[name], propertyValue, `${path}.${name}`, out);
      else if (schema.additionalProperties !== undefined)
        this.check(schema.additionalProperties, propertyValue, `${path}.${name}`, out);
    }
  }

  private collect(schema: unknown, value: unknown, path: string): string[] {
    const violations: string[] = [];
    this.check(schema, value, path, violations);
    return violations;
  }

  /** Values a branch allows for the discriminator property (its `enum` or `const`). */
  private readTags(branch: unknown, propertyName: string): unknown[] {
    const schema = this.dereference(branch);
    if (!isObject(schema)) return [];
    const property = isObject(schema.properties)
      ? this.dereference(schema.properties[propertyName])
      : undefined;
    if (isObject(property)) {
      if (Array.isArray(property.enum)) return property.enum;
      if ("const" in property) return [property.const];
    }
    const parts = [...asArray(schema.allOf), ...asArray(schema.anyOf), ...asArray(schema.oneOf)];
    return parts.flatMap((part) => this.readTags(part, propertyName));
  }

  private dereference(schema: unknown): unknown {
    let current = schema;
    for (let hops = 0; isObject(current) && typeof current.$ref === "string" && hops < 32; hops++) {
      current = this.resolve(current.$ref);
    }
    return current;
  }

  private resolve(ref: string): unknown {
    if (!ref.startsWith("#/")) throw new Error(`only local $refs are supported: ${ref}`);
    let node: unknown = this.document;
    for (const segment of ref.slice(2).split("/")) {
      const key = segment.replaceAll("~1", "/").replaceAll("~0", "~");
      if (!isObject(node) || !(key in node)) throw new Error(`unresolvable $ref ${ref}`);
      node = node[key];
    }
    return node;
  }
}

function checkNumber(schema: Schema, value: number, path: string, out: string[]): void {
  if (typeof schema.minimum === "number" && value < schema.minimum)
    out.push(`${path}: ${value} < ${schema.minimum}`);
  if (typeof schema.maximum === "number" && value > schema.maximum)
    out.push(`${path}: ${value} > ${schema.maximum}`);
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    out.push(`${path}: ${value} <= ${schema.exclusiveMinimum}`);
  }
  if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
    out.push(`${path}: ${value} >= ${schema.exclusiveMaximum}`);
  }
}

function checkString(schema: Schema, value: string, path: string, out: string[]): void {
  if (typeof schema.minLength === "number" && value.length < schema.minLength) {
    out.push(`${path}: shorter than ${schema.minLength}`);
  }
  if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
    out.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    out.push(`${path}: does not match /${schema.pattern}/`);
  }
}

function matchesType(type: unknown, value: unknown): boolean {
  if (Array.isArray(type)) return type.some((option) => matchesType(option, value));
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return true;
  }
}

/** The violations of the branch that came closest (fewest violations), indented. */
function closest(results: string[][]): string[] {
  const best = results.reduce((a, b) => (b.length < a.length ? b : a), results[0] ?? []);
  return best.map((violation) => `  ${violation}`);
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
