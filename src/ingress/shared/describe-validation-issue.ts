/**
 * Turns a zod validation failure into the gateway's `invalid_request` error: `param` names the field
 * in OpenAI style (`messages[0].content[1].text`) and the message says what is wrong with it
 * ("temperature must be at most 2"), instead of zod's generic texts.
 */
import type { z } from "zod";
import { GatewayError } from "../../errors/gateway-error.js";

type Issue = z.core.$ZodIssue;
type PathSegment = PropertyKey;

export interface DescribedIssue {
  /** OpenAI-style parameter path, or null when the body itself is wrong. */
  param: string | null;
  message: string;
}

export function createValidationError(issues: readonly Issue[], body: unknown): GatewayError {
  const described = describeValidationIssue(issues[0], body);
  return GatewayError.invalidRequest(described.message, described.param);
}

export function describeValidationIssue(
  issue: Issue,
  body: unknown,
  basePath: readonly PathSegment[] = [],
): DescribedIssue {
  const path = [...basePath, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // A union failed in every branch; report the branch the input evidently meant.
    const branch = pickIntendedBranch(issue.errors);
    if (branch !== undefined) return describeValidationIssue(branch[0], body, path);
  }
  const param = formatParam(path);
  if (param === null && issue.code === "invalid_type") {
    return { param, message: "request body must be a JSON object" };
  }
  return { param, message: `${param ?? "request body"} ${describePredicate(issue, readAtPath(body, path))}` };
}

/** `["messages", 0, "content"]` → `messages[0].content`; the empty path → null. */
export function formatParam(path: readonly PathSegment[]): string | null {
  let param = "";
  for (const segment of path) {
    if (typeof segment === "number") param += `[${segment}]`;
    else param += param === "" ? String(segment) : `.${String(segment)}`;
  }
  return param === "" ? null : param;
}

/**
 * The union branch the caller meant: one whose failures all lie below its root and not on its
 * `type` discriminator (so the input had the right shape and kind), the deepest such one. When every
 * branch failed at its root, the input matched no variant and the union's own message applies.
 */
function pickIntendedBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  let best: readonly Issue[] | undefined;
  let bestDepth = 0;
  for (const branch of branches) {
    if (branch.length === 0 || branch.some(failsAtRoot)) continue;
    const depth = Math.max(...branch.map((issue) => issue.path.length));
    if (depth > bestDepth) {
      best = branch;
      bestDepth = depth;
    }
  }
  return best;
}

function failsAtRoot(issue: Issue): boolean {
  return issue.path.length === 0 || (issue.path.length === 1 && issue.path[0] === "type");
}

function describePredicate(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      return value === undefined ? "is required" : `must be ${describeType(issue.expected)}`;
    case "too_small":
      return describeBound(
        issue.origin,
        "at least",
        "greater than",
        issue.inclusive !== false,
        issue.minimum,
      );
    case "too_big":
      return describeBound(issue.origin, "at most", "less than", issue.inclusive !== false, issue.maximum);
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(", ")}`;
    case "invalid_union":
      if (value === undefined) return "is required";
      // A discriminated union whose discriminator matched no option (zod puts the options here).
      if ("options" in issue && Array.isArray(issue.options)) {
        return `must be one of ${issue.options.map(String).join(", ")}`;
      }
      return issue.message === "Invalid input" ? "is invalid" : issue.message;
    default:
      return issue.message;
  }
}

function describeBound(
  origin: string,
  inclusiveWord: string,
  exclusiveWord: string,
  inclusive: boolean,
  bound: number | bigint,
): string {
  const word = inclusive ? inclusiveWord : exclusiveWord;
  if (origin === "array" || origin === "set")
    return `must contain ${word} ${bound} item${bound === 1 ? "" : "s"}`;
  if (origin === "string") {
    if (inclusive && bound === 1 && inclusiveWord === "at least") return "must not be empty";
    return `must be ${word} ${bound} characters long`;
  }
  return `must be ${word} ${bound}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  object: "an object",
  record: "an object",
  array: "an array",
  null: "null",
};

function describeType(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

function readAtPath(body: unknown, path: readonly PathSegment[]): unknown {
  let value = body;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}
