import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/**
 * One file of `src/` (tests left out): the files of `src/` it imports (paths relative to `src/`)
 * and the packages it imports (`pg`, `@electric-sql/pglite`; node: built-ins left out).
 */
export interface SourceFile {
  path: string;
  imports: string[];
  packages: string[];
}

/** Every `.ts` file under `folder` that is not a test or a declaration file, appended to `out`. */
export function listSourceFiles(folder: string, out: string[]): string[] {
  for (const entry of readdirSync(folder)) {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) listSourceFiles(path, out);
    else if (entry.endsWith(".ts") && !entry.endsWith(".test.ts") && !entry.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** `@scope/name/sub/path` → `@scope/name`, `name/sub` → `name`. */
function readPackageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** `./x.js` as written in an import, mapped back to the `.ts` file it names; null outside `src/`. */
function resolveSpecifier(sourceRoot: string, fromFile: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const target = resolve(dirname(fromFile), specifier);
  const candidates = [target.replace(/\.js$/, ".ts"), target, `${target}.ts`, join(target, "index.ts")];
  const found = candidates.find((candidate) => candidate.endsWith(".ts") && existsSync(candidate));
  if (!found) return null;
  const path = relative(sourceRoot, found);
  return path.startsWith("..") ? null : path;
}

/**
 * Every static import, re-export and literal dynamic `import()` of every non-test file under
 * `sourceRoot`, type-only imports included (a type import is still an arrow of the design). The
 * TypeScript scanner reads real import syntax only, so code inside template strings (the source
 * of worker threads) is not mistaken for an import.
 */
export function readImportGraph(sourceRoot: string): SourceFile[] {
  return listSourceFiles(sourceRoot, [])
    .sort()
    .map((file) => {
      const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      const imports = new Set<string>();
      const packages = new Set<string>();
      for (const { fileName } of info.importedFiles) {
        if (!fileName.startsWith(".")) {
          if (!fileName.startsWith("node:")) packages.add(readPackageName(fileName));
          continue;
        }
        const target = resolveSpecifier(sourceRoot, file, fileName);
        if (target) imports.add(target);
      }
      return {
        path: relative(sourceRoot, file),
        imports: [...imports].sort(),
        packages: [...packages].sort(),
      };
    });
}

/** The cycles of a directed graph (one per strongly connected component of two or more nodes, or a self-loop). */
export function findCycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || edges.get(node)?.has(node)) cycles.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}
