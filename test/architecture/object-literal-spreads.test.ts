import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { listSourceFiles } from "./import-graph.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const SOURCE = join(ROOT, "src");

/**
 * The lines (1-based) of the object literals in `text` whose first member is a spread and that
 * have more members after it: `{ ...a, k }`, `{ ...a, ...b }`. A spread alone (`{ ...a }`), one
 * after a plain member, and spreads in arrays, calls and types are not such literals.
 */
function findLeadingSpreads(fileName: string, text: string): number[] {
  if (!text.includes("...")) return [];
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isObjectLiteralExpression(node) &&
      node.properties.length > 1 &&
      ts.isSpreadAssignment(node.properties[0])
    ) {
      lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

/** The request path, where a profile showed the cost of such literals (CONTRIBUTING.md). */
const HOT_PATH_FOLDERS = ["engine", "providers", "ingress", "http/router", "http/generation"];

test("object literals on the request path never start with a spread when more members follow", () => {
  const found = HOT_PATH_FOLDERS.flatMap((folder) => listSourceFiles(join(SOURCE, folder), []))
    .sort()
    .flatMap((file) =>
      findLeadingSpreads(file, readFileSync(file, "utf8")).map(
        (line) => `src/${relative(SOURCE, file)}:${line}`,
      ),
    );
  assert.deepEqual(
    found,
    [],
    "\nAn object literal on the request path starts with a spread and has more members (CONTRIBUTING.md): " +
      `put a plain member first or write the fields out.\n${found.join("\n")}\n`,
  );
});

test("leading-spread check: each literal that starts with a spread and goes on is found", () => {
  const text = [
    "const a = { ...base, k: 1 };", // 1: found
    "const b = { ...base, ...more };", // 2: found
    "const c = { ...(flag ? { x } : {}), y };", // 3: found
    "const d = { ...base };", // 4: a spread alone
    "const e = { k: 1, ...base, j: 2 };", // 5: a plain member first
    "const f = [...list, item];", // 6: an array
    "call(...args, last);", // 7: a call
    "type T = [...Head, Last];", // 8: a type
    "const g = { k: { ...inner, j } };", // 9: the inner literal
    "const h = {", // 10: found (reported where it starts)
    "  ...base,",
    "  async close() {},",
    "};",
  ].join("\n");
  assert.deepEqual(findLeadingSpreads("sample.ts", text), [1, 2, 3, 9, 10]);
});
