import type { BoundaryTables, FolderRule } from "./boundary-table.js";
import { findCycles, type SourceFile } from "./import-graph.js";

/**
 * Every way the code breaks the boundary tables: a file in no row, a row or name that matches
 * nothing, an import a row does not allow, a package imported outside its rows, a cycle of rows
 * or of files. `folders` lists every folder of `src/` (relative, with a trailing slash); `outside`
 * says whether a path exists at the project root instead (rows such as `web/`).
 */
export function checkBoundaries(
  tables: BoundaryTables,
  files: SourceFile[],
  folders: string[],
  outside: (path: string) => boolean,
): string[] {
  const problems: string[] = [];
  const exists = (name: string): boolean =>
    folders.includes(name) || files.some((file) => file.path === name);
  const rules = new Map<string, string[] | null>();
  for (const rule of expandGlobRows(tables.folders, folders)) {
    if (exists(rule.name)) rules.set(rule.name, rule.mayImport);
    else if (!outside(rule.name)) problems.push(`the table names ${rule.name}, which does not exist`);
  }
  const units = [...rules.keys()].sort((a, b) => b.length - a.length);
  const unitOf = (path: string): string | undefined =>
    units.find((unit) => path === unit || (unit.endsWith("/") && path.startsWith(unit)));
  const resolveNames = (owner: string, names: string[]): Set<string> => {
    const resolved = new Set<string>();
    for (const name of names) {
      const matches = name.endsWith("*")
        ? units.filter((unit) => unit.startsWith(name.slice(0, -1)) && unit !== name.slice(0, -1))
        : units.filter((unit) => unit === name);
      if (matches.length === 0) problems.push(`${owner} may import ${name}, which is no row of the table`);
      for (const match of matches) resolved.add(match);
    }
    return resolved;
  };
  const allowed = new Map<string, Set<string> | null>();
  for (const [unit, names] of rules) allowed.set(unit, names === null ? null : resolveNames(unit, names));

  const unitEdges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = unitOf(file.path);
    if (!from) {
      problems.push(`src/${file.path} is in no row of the table`);
      continue;
    }
    for (const imported of file.imports) {
      const to = unitOf(imported);
      if (!to || to === from) continue;
      if (!unitEdges.has(from)) unitEdges.set(from, new Set());
      unitEdges.get(from)?.add(to);
      const may = allowed.get(from);
      if (may && !may.has(to))
        problems.push(`src/${file.path} imports src/${imported}: ${from} may not import ${to}`);
    }
  }
  for (const rule of tables.packages) {
    const owners = resolveNames(`package ${rule.name}`, rule.onlyIn);
    for (const file of files) {
      const unit = unitOf(file.path);
      if (unit && file.packages.includes(rule.name) && !owners.has(unit)) {
        problems.push(
          `src/${file.path} imports ${rule.name}, which only ${[...owners].join(", ")} may import`,
        );
      }
    }
  }
  const folderCycles = findCycles(unitEdges);
  for (const cycle of folderCycles) problems.push(`folder cycle: ${cycle.join(" ⇄ ")}`);
  const seen = new Set(folderCycles.map((cycle) => [...cycle].sort().join(" ")));
  for (const cycle of findCycles(topLevelEdges(files))) {
    if (!seen.has([...cycle].sort().join(" "))) problems.push(`top-level folder cycle: ${cycle.join(" ⇄ ")}`);
  }
  const fileEdges = new Map(files.map((file) => [file.path, new Set(file.imports)]));
  for (const cycle of findCycles(fileEdges)) problems.push(`file cycle: ${cycle.join(" ⇄ ")}`);
  return problems;
}

/**
 * Arrows between the top-level folders of `src/` (and its loose files), whatever the table's rows
 * are: a row for a single file or a subfolder can allow arrows that close a loop between two
 * top-level folders, which the rows' own cycle check does not see.
 */
function topLevelEdges(files: SourceFile[]): Map<string, Set<string>> {
  const topOf = (path: string): string => {
    const slash = path.indexOf("/");
    return slash === -1 ? path : path.slice(0, slash + 1);
  };
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = topOf(file.path);
    for (const imported of file.imports) {
      const to = topOf(imported);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)?.add(to);
    }
  }
  return edges;
}

/** `providers/*` becomes one rule per subfolder of `providers/` that has no row of its own. */
function expandGlobRows(rules: FolderRule[], folders: string[]): FolderRule[] {
  const explicit = new Set(rules.filter((rule) => !rule.name.endsWith("*")).map((rule) => rule.name));
  return rules.flatMap((rule) => {
    if (!rule.name.endsWith("*")) return [rule];
    const parent = rule.name.slice(0, -1);
    return folders
      .filter(
        (folder) =>
          folder.startsWith(parent) && folder !== parent && !folder.slice(parent.length, -1).includes("/"),
      )
      .filter((folder) => !explicit.has(folder))
      .map((folder) => ({ name: folder, mayImport: rule.mayImport }));
  });
}
