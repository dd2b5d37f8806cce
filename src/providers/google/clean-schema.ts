/**
 * JSON Schema → the Gemini `Schema` object (an OpenAPI 3.0 subset) by ALLOWLIST.
 *
 * Gemini answers a whole request with 400 for one keyword it does not know, deep in one tool of a
 * long list (`Unknown name "additionalProperties"`, `only 'enum' and 'date-time' are supported for
 * STRING type`, `enum only allowed for STRING type`). So every keyword not listed below is dropped,
 * and the ones kept are checked for the shapes Gemini accepts. Keywords with a faithful translation
 * are translated instead of dropped:
 * - local `$ref` (`#/$defs/…`, `#/definitions/…`, any local JSON pointer) is resolved inline, with
 *   sibling keywords layered on top; a recursive reference is expanded {@link MAX_REF_REPEATS} times
 *   and then cut to a type-only schema (Gemini has no references in this dialect). Inlining can
 *   grow a small schema exponentially (each definition referring twice to the next), so the
 *   output is bounded: past {@link MAX_CLEANED_SCHEMA_NODES} nodes or
 *   {@link MAX_CLEANED_SCHEMA_CHARACTERS} characters (shared by the schemas of one request through
 *   {@link SchemaBudget}) cleaning stops with {@link SchemaTooLargeError};
 * - `allOf` members are merged (properties and required united, the first word wins elsewhere);
 * - `oneOf` becomes `anyOf`; `null` members of `anyOf` and `"null"` in a type array become
 *   `nullable: true`; a type array of several types becomes `anyOf` of single types;
 * - `const` becomes a one-value `enum` (strings only: Gemini enums are strings).
 * Kept as is: type, title, description, nullable, properties, required (only names that exist),
 * propertyOrdering (likewise), items, minItems, maxItems, minLength, maxLength, minProperties,
 * maxProperties, minimum, maximum, anyOf, enum (all-string, on string schemas), format (`enum`,
 * `date-time` for strings; `float`, `double` for numbers; `int32`, `int64` for integers).
 * Dropped (reported through `onDrop`): everything else, notably additionalProperties, $schema, $id,
 * uniqueItems, propertyNames, patternProperties, pattern (an ECMA-262 regex Gemini may not parse),
 * default and examples (documentation only), exclusive bounds, multipleOf, not, if/then/else.
 * Sources: googleapis/js-genai `Schema`; firebase `SchemaShared.format`; the issue threads of E33.
 */

export interface CleanSchemaOptions {
  /** Called once per dropped keyword with its location (e.g. `properties.tags.uniqueItems`). */
  onDrop?: (path: string, keyword: string) => void;
  /** What the output may still hold; pass one budget to every schema of a request. */
  budget?: SchemaBudget;
}

/**
 * What one request's cleaned schemas may hold together: schema nodes (what cleaning costs) and
 * characters of names and texts (what the upstream body carries). Far above
 * any schema Gemini serves (it refuses schemas with too many states long before): 1,000 tools of
 * a few properties each fit.
 */
export const MAX_CLEANED_SCHEMA_NODES = 10_000;
export const MAX_CLEANED_SCHEMA_CHARACTERS = 4_000_000;

export interface SchemaBudget {
  nodes: number;
  characters: number;
}

export function createSchemaBudget(): SchemaBudget {
  return { nodes: MAX_CLEANED_SCHEMA_NODES, characters: MAX_CLEANED_SCHEMA_CHARACTERS };
}

/** The cleaned schemas would outgrow their budget (see {@link MAX_CLEANED_SCHEMA_NODES}). */
export class SchemaTooLargeError extends Error {
  constructor() {
    super(
      `the schema grows past ${MAX_CLEANED_SCHEMA_NODES} nodes or ${MAX_CLEANED_SCHEMA_CHARACTERS} characters ` +
        "(all schemas of the request together) when its $refs are inlined for Gemini, which has no references; " +
        "simplify it or reuse fewer definitions",
    );
  }
}

type Schema = Record<string, unknown>;

/** How often one `$ref` may be expanded inside itself before the recursion is cut. */
export const MAX_REF_REPEATS = 2;
/** Nesting bound: a pathological schema cannot exhaust the stack. */
const MAX_DEPTH = 40;

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);
const FORMATS_BY_TYPE: Record<string, ReadonlySet<string>> = {
  string: new Set(["enum", "date-time"]),
  number: new Set(["float", "double"]),
  integer: new Set(["int32", "int64"]),
};
const COUNT_KEYWORDS = [
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
] as const;
/** Keywords consumed by a translation: never reported as dropped. */
const TRANSLATED = new Set([
  "$ref",
  "$defs",
  "definitions",
  "allOf",
  "anyOf",
  "oneOf",
  "const",
  "type",
  "enum",
  "format",
  "properties",
  "required",
  "propertyOrdering",
  "items",
  "prefixItems",
  "title",
  "description",
  "nullable",
  "minimum",
  "maximum",
  ...COUNT_KEYWORDS,
]);

interface Context {
  root: Schema;
  /** How often each reference is being expanded on the current path. */
  expanding: Map<string, number>;
  /** Targets of the references resolved so far (undefined: not resolvable). */
  targets: Map<string, Schema | undefined>;
  onDrop?: (path: string, keyword: string) => void;
  budget: SchemaBudget;
}

/**
 * Cleans a JSON Schema for Gemini's `parameters` / `responseSchema`. Throws only
 * {@link SchemaTooLargeError}, when the output outgrows the budget.
 */
export function cleanSchemaForGemini(schema: unknown, options: CleanSchemaOptions = {}): Schema {
  const root = isRecord(schema) ? schema : {};
  const budget = options.budget ?? createSchemaBudget();
  return cleanNode(root, "", 0, {
    root,
    expanding: new Map(),
    targets: new Map(),
    onDrop: options.onDrop,
    budget,
  });
}

/** Takes one node and `characters` from the budget; throws when either runs out. */
function spendNode(context: Context): void {
  if (--context.budget.nodes < 0) throw new SchemaTooLargeError();
}

function spendCharacters(context: Context, characters: number): void {
  context.budget.characters -= characters;
  if (context.budget.characters < 0) throw new SchemaTooLargeError();
}

function cleanNode(node: unknown, path: string, depth: number, context: Context): Schema {
  if (!isRecord(node) || depth > MAX_DEPTH) return {};
  spendNode(context);
  if (typeof node.$ref === "string") return cleanReference(node, node.$ref, path, depth, context);
  if (Array.isArray(node.allOf)) {
    const { allOf, ...rest } = node;
    const members = allOf.map((member, index) =>
      cleanNode(member, childPath(context, path, `allOf.${index}`), depth + 1, context),
    );
    return mergeSchemas([cleanNode(rest, path, depth + 1, context), ...members]);
  }
  for (const key of Object.keys(node)) {
    if (!TRANSLATED.has(key)) context.onDrop?.(join(path, key), key);
  }

  const result: Schema = {};
  // type: one JSON type; "null" and type arrays become nullable / anyOf.
  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter(
    (item): item is string => typeof item === "string",
  );
  let nullable = node.nullable === true || types.includes("null");
  const realTypes = types.filter((item) => JSON_TYPES.has(item));
  if (realTypes.length === 1) result.type = realTypes[0];

  copyString(node, result, "title", context);
  copyString(node, result, "description", context);
  for (const key of COUNT_KEYWORDS) {
    const value = node[key];
    if (typeof value === "number" && Number.isInteger(value) && value >= 0) result[key] = value;
  }
  for (const key of ["minimum", "maximum"] as const) {
    if (typeof node[key] === "number" && Number.isFinite(node[key])) result[key] = node[key];
  }
  if (cleanEnum(node, result, path, context)) nullable = true;
  if (typeof node.format === "string") {
    const allowed = FORMATS_BY_TYPE[String(result.type)];
    if (allowed?.has(node.format)) result.format = node.format;
    else context.onDrop?.(join(path, "format"), "format");
  }
  cleanProperties(node, result, path, depth, context);
  const items = cleanItems(node, path, depth, context);
  if (items !== undefined) {
    result.items = items;
    result.type ??= "array";
  }
  const typeAlternatives = realTypes.length > 1 ? realTypes.map((item) => ({ type: item })) : [];
  if (cleanAlternatives(node, typeAlternatives, result, path, depth, context)) nullable = true;
  if (nullable) result.nullable = true;
  return result;
}

/** `enum` / `const` → a string enum on a string schema, else dropped. Returns whether null was allowed. */
function cleanEnum(node: Schema, result: Schema, path: string, context: Context): boolean {
  const keyword = Array.isArray(node.enum) ? "enum" : "const" in node ? "const" : undefined;
  if (keyword === undefined) return false;
  const enumValues = keyword === "enum" ? (node.enum as unknown[]) : [node.const];
  const values = enumValues.filter((value) => value !== null);
  const keep =
    values.length > 0 &&
    values.every((value) => typeof value === "string") &&
    (result.type === undefined || result.type === "string");
  if (keep) {
    for (const value of values) spendCharacters(context, (value as string).length + 3);
    result.type = "string";
    result.enum = values;
  } else if (values.length > 0) {
    context.onDrop?.(join(path, keyword), keyword);
  }
  return enumValues.includes(null);
}

/**
 * `properties` with `required` and `propertyOrdering` limited to names that exist (Gemini rejects
 * the others). Empty `properties` are left out: on an OBJECT they are a 400 on older models.
 */
function cleanProperties(node: Schema, result: Schema, path: string, depth: number, context: Context): void {
  if (!isRecord(node.properties)) return;
  const properties: Schema = {};
  for (const [name, value] of Object.entries(node.properties)) {
    spendCharacters(context, name.length + 3);
    properties[name] = cleanNode(value, childPath(context, path, `properties.${name}`), depth + 1, context);
  }
  const names = new Set(Object.keys(properties));
  if (names.size === 0) return;
  result.properties = properties;
  result.type ??= "object";
  const required = readStrings(node.required).filter((name) => names.has(name));
  if (required.length > 0) result.required = [...new Set(required)];
  const ordering = readStrings(node.propertyOrdering).filter((name) => names.has(name));
  if (ordering.length > 0) result.propertyOrdering = ordering;
}

/**
 * Type-array alternatives, `anyOf` and `oneOf` → `anyOf`. `null` alternatives become nullable (the
 * return value); a single remaining alternative is inlined (pydantic's `Optional[X]`), the outer
 * words winning; an alternative that accepts anything makes the whole choice void, so it is dropped.
 */
function cleanAlternatives(
  node: Schema,
  typeAlternatives: Schema[],
  result: Schema,
  path: string,
  depth: number,
  context: Context,
): boolean {
  const alternatives = [
    ...typeAlternatives,
    ...(["anyOf", "oneOf"] as const).flatMap((keyword) =>
      readSchemas(node[keyword]).map((member, index) =>
        cleanNode(member, childPath(context, path, `${keyword}.${index}`), depth + 1, context),
      ),
    ),
  ];
  const isNull = (member: Schema) => Object.keys(member).length === 1 && member.nullable === true;
  const nonNull = alternatives.filter((member) => !isNull(member));
  if (nonNull.some((member) => Object.keys(member).length === 0)) {
    context.onDrop?.(join(path, "anyOf" in node ? "anyOf" : "oneOf"), "anyOf" in node ? "anyOf" : "oneOf");
  } else if (nonNull.length === 1) {
    Object.assign(result, mergeSchemas([result, nonNull[0]!]));
  } else if (nonNull.length > 1) {
    result.anyOf = nonNull;
  }
  return nonNull.length < alternatives.length;
}

function cleanReference(
  node: Schema,
  reference: string,
  path: string,
  depth: number,
  context: Context,
): Schema {
  const { $ref: _ignored, ...siblings } = node;
  let target = context.targets.get(reference);
  if (target === undefined && !context.targets.has(reference)) {
    target = resolveLocalReference(context.root, reference);
    context.targets.set(reference, target);
  }
  const siblingSchema = Object.keys(siblings).length > 0 ? cleanNode(siblings, path, depth + 1, context) : {};
  if (target === undefined) {
    context.onDrop?.(join(path, "$ref"), "$ref");
    return siblingSchema;
  }
  const repeats = context.expanding.get(reference) ?? 0;
  if (repeats >= MAX_REF_REPEATS) {
    // Recursion cut: keep what the value is, not its structure.
    const cut: Schema = {};
    if (typeof target.type === "string" && JSON_TYPES.has(target.type)) cut.type = target.type;
    copyString(target, cut, "description", context);
    return mergeSchemas([siblingSchema, cut]);
  }
  context.expanding.set(reference, repeats + 1);
  try {
    return mergeSchemas([siblingSchema, cleanNode(target, path, depth + 1, context)]);
  } finally {
    context.expanding.set(reference, repeats);
  }
}

/** `#`, `#/$defs/Name`, `#/definitions/Name` and any other local JSON pointer (RFC 6901 escapes). */
function resolveLocalReference(root: Schema, reference: string): Schema | undefined {
  if (!reference.startsWith("#")) return undefined;
  const pointer = reference.slice(1);
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined;
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined; // a malformed %-escape names nothing
    }
    // Own keys only: `__proto__` or `constructor` name no definition.
    if ((!isRecord(current) && !Array.isArray(current)) || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return isRecord(current) ? current : undefined;
}

/** `items` (object or legacy tuple array) or `prefixItems`; a tuple becomes `anyOf` of its members. */
function cleanItems(node: Schema, path: string, depth: number, context: Context): Schema | undefined {
  if (isRecord(node.items))
    return cleanNode(node.items, childPath(context, path, "items"), depth + 1, context);
  const tuple = Array.isArray(node.items)
    ? node.items
    : Array.isArray(node.prefixItems)
      ? node.prefixItems
      : undefined;
  if (tuple === undefined || tuple.length === 0) return undefined;
  const members = tuple.map((member, index) =>
    cleanNode(member, childPath(context, path, `items.${index}`), depth + 1, context),
  );
  return members.length === 1 ? members[0] : { anyOf: members };
}

/**
 * Merges cleaned schemas: `properties` and `required` are united; for every other keyword the
 * first schema that has it wins (so callers list the most specific schema first).
 */
function mergeSchemas(schemas: Schema[]): Schema {
  // One cleaned schema with content (the other empty, as a `$ref` without siblings gives): it is
  // already what merging would make of it (required unique, object type with properties).
  const nonEmpty = schemas.filter(hasKeys);
  if (nonEmpty.length === 1) return nonEmpty[0];
  const result: Schema = {};
  const required: string[] = [];
  // One accumulator, each property added once: merging stays linear in the properties merged.
  // (A Map: names such as `__proto__` or `toString` are plain keys there.)
  let properties: Map<string, unknown> | undefined;
  for (const schema of schemas) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "properties" && isRecord(value)) {
        properties ??= new Map();
        for (const [name, property] of Object.entries(value)) {
          if (!properties.has(name)) properties.set(name, property);
        }
      } else if (key === "required") {
        for (const name of readStrings(value)) required.push(name);
      } else if (!(key in result)) {
        result[key] = value;
      }
    }
  }
  if (properties !== undefined) result.properties = Object.fromEntries(properties);
  if (required.length > 0) result.required = [...new Set(required)];
  if (result.properties !== undefined) result.type ??= "object";
  return result;
}

function hasKeys(schema: Schema): boolean {
  for (const _ in schema) return true;
  return false;
}

function copyString(from: Schema, to: Schema, key: string, context: Context): void {
  const value = from[key];
  if (typeof value !== "string") return;
  spendCharacters(context, value.length + key.length + 6);
  to[key] = value;
}

function readStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function readSchemas(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** A child's location, built only when someone listens for drops (it is a string per node). */
function childPath(context: Context, path: string, key: string): string {
  return context.onDrop === undefined ? "" : join(path, key);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
