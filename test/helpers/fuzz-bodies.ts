/**
 * fast-check arbitraries for hostile JSON request bodies: odd values (wrong types, nulls, huge and
 * negative numbers, lone surrogates, NUL), JSON text only a serialiser written for the purpose can
 * produce (duplicate keys, number literals beyond a double, raw control bytes), and "one field
 * mutated" variants of valid bodies.
 *
 * Sizes stay far below what the CPU bounds of request handling are about (single words of 80 KB
 * and more, nesting 10,000 levels deep): those have their own tests; here the point is variety.
 */
import fc from "fast-check";
import { formatParam } from "../../src/ingress/shared/describe-validation-issue.js";

/**
 * An object serialised with one key twice: the extra value before the object's own entries (JSON.parse
 * keeps the later, original one) or after them (the extra one wins).
 */
export class WithDuplicateKey {
  constructor(
    readonly value: Record<string, unknown>,
    readonly key: string,
    readonly extraValue: unknown,
    readonly extraLast: boolean,
  ) {}
}

/** A number token written verbatim (`1e400` parses to Infinity, `-0`, `1E+2`). */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold WithDuplicateKey and RawNumber nodes. */
export function serialise(value: unknown): string {
  // A field mutation may have replaced a raw number's text with any value: write that value.
  if (value instanceof RawNumber)
    return typeof value.text === "string" ? value.text : serialise(value.text as unknown);
  if (value instanceof WithDuplicateKey) {
    const entries = Object.entries(value.value).map(([k, v]) => `${JSON.stringify(k)}:${serialise(v)}`);
    const extra = `${JSON.stringify(value.key)}:${serialise(value.extraValue)}`;
    return `{${(value.extraLast ? [...entries, extra] : [extra, ...entries]).join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(serialise).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${serialise(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export const oddStrings = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "\udfff",
    "x\ud83d",
    "\ufeff",
    "\r\n",
    "__proto__",
    "constructor",
    "' OR 1=1 --",
    "../../etc/passwd",
    "%00",
    "null",
    "[object Object]",
    "\u202e\u0000\u2028",
    "😀".repeat(50),
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udc00", "a", "\u00e9", "\n"), maxLength: 20 }),
  fc.nat({ max: 20_000 }).map((length) => "z".repeat(length)),
);

export const oddNumbers = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    0.5,
    -0.5,
    2,
    3,
    101,
    -101,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER,
    2 ** 31,
    2 ** 32,
    -(2 ** 31) - 1,
    5e-324,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number tokens JSON.parse accepts although no double prints as them. */
export const rawNumbers = fc
  .constantFrom("1e400", "-1e400", "1E+999", "-0", "0e0", "1.0", "4.9e-325", "123456789012345678901234567890")
  .map((text) => new RawNumber(text));

export const oddScalars: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  oddNumbers,
  oddStrings,
  rawNumbers,
);

/** Any JSON value, leaning to odd leaves; bounded depth and size. */
export const oddValues: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    oddScalars,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(oddStrings, fc.constantFrom("type", "text", "role", "content")), tie("value"), {
      maxKeys: 4,
    }),
  ),
})).value;

type Path = (string | number)[];

/** Every path in a JSON tree, the root ([]) included. */
export function listPaths(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = [prefix];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) paths.push(...listPaths(item, [...prefix, index]));
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) paths.push(...listPaths(item, [...prefix, key]));
  }
  return paths;
}

export type Mutation =
  | { kind: "replace"; path: Path; value: unknown }
  | { kind: "delete"; path: Path }
  | { kind: "add-key"; path: Path; key: string; value: unknown }
  | { kind: "duplicate-key"; path: Path; value: unknown; extraLast: boolean };

/** The body with one node changed; `path` says where (for checking the error's `param`). */
export function applyMutation(body: unknown, mutation: Mutation): unknown {
  const { path } = mutation;
  if (path.length === 0) {
    if (mutation.kind === "replace") return mutation.value;
    if (mutation.kind === "add-key" && isObject(body)) return { ...body, [mutation.key]: mutation.value };
    return body;
  }
  const copy = cloneTree(body);
  // After an earlier mutation of the same tree the path may lead nowhere: nothing to change then.
  const parent = path
    .slice(0, -1)
    .reduce<unknown>(
      (node, key) => (typeof node === "object" && node !== null ? (node as never)[key] : undefined),
      copy,
    );
  if (typeof parent !== "object" || parent === null) return body;
  const last = path[path.length - 1]!;
  const target = (parent as Record<string | number, unknown>)[last];
  switch (mutation.kind) {
    case "replace":
      (parent as Record<string | number, unknown>)[last] = mutation.value;
      break;
    case "delete":
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete (parent as Record<string, unknown>)[last];
      break;
    case "add-key":
      // An own key even when it is `__proto__`: assigning that one would replace the prototype
      // (with a RawNumber value, the node would then serialise as a raw number: invalid JSON).
      if (isObject(target)) {
        Object.defineProperty(target, mutation.key, {
          value: mutation.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      break;
    case "duplicate-key":
      if (isObject(parent) && typeof last === "string") {
        const duplicated = new WithDuplicateKey(parent, last, mutation.value, mutation.extraLast);
        return replaceAt(copy, path.slice(0, -1), duplicated);
      }
      break;
  }
  return copy;
}

/** A deep copy that keeps WithDuplicateKey and RawNumber nodes what they are. */
function cloneTree(value: unknown): unknown {
  if (value instanceof RawNumber) return value;
  if (value instanceof WithDuplicateKey) {
    return new WithDuplicateKey(
      cloneTree(value.value) as Record<string, unknown>,
      value.key,
      cloneTree(value.extraValue),
      value.extraLast,
    );
  }
  if (Array.isArray(value)) return value.map(cloneTree);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cloneTree(item)]));
  }
  return value;
}

function replaceAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as never)[key], root);
  (parent as Record<string | number, unknown>)[path[path.length - 1]!] = value;
  return root;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The mutated field, as `param` would name it (`messages[0].content`); null for the root. */
export function mutatedParam(mutation: Mutation): string | null {
  return formatParam(mutation.kind === "add-key" ? [...mutation.path, mutation.key] : mutation.path);
}

/** `inner` is the field `outer` or lies inside it (`messages[0].content` within `messages`). */
export function isWithinParam(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
}

/** A mutation of `body` at one of its paths. */
export function mutationsOf(body: unknown): fc.Arbitrary<Mutation> {
  const paths = listPaths(body);
  const path = fc.constantFrom(...paths);
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant("replace" as const), path, value: oddValues }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), path }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("add-key" as const),
        path,
        key: fc.oneof(oddStrings, fc.constantFrom("__proto__", "constructor", "stream", "model")),
        value: oddValues,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("duplicate-key" as const),
        path,
        value: oddValues,
        extraLast: fc.boolean(),
      }),
    },
  );
}

/** A valid body from `valid`, with one mutation, serialised (the mutation alongside). */
export function mutatedBodies(valid: fc.Arbitrary<Record<string, unknown>>) {
  return valid.chain((body) =>
    mutationsOf(body).map((mutation) => ({ mutation, text: serialise(applyMutation(body, mutation)) })),
  );
}

/** Bodies that are not a JSON object at all, or not JSON. */
export const malformedBodyTexts: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "null",
    "[]",
    "0",
    '"text"',
    "{",
    '{"model":',
    "{}",
    "[{}]",
    '{"a":1}}',
    "\ufeff{}",
    '{"model":"x"\u0000}',
    "{'model': 'x'}",
    "model=x&messages=y",
    "\u0000\u0000\u0000",
  ),
  oddValues.map(serialise),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }),
);

/** Bytes that are not UTF-8: lone surrogate halves (CESU-8), overlongs, truncated sequences. */
export const invalidUtf8 = fc.constantFrom(
  Uint8Array.from([0xed, 0xa0, 0x80]),
  Uint8Array.from([0xc0, 0xaf]),
  Uint8Array.from([0xe2, 0x82]),
  Uint8Array.from([0xff]),
  Uint8Array.from([0xf4, 0x90, 0x80, 0x80]),
);
