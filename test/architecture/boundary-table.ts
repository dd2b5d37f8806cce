/**
 * Reads the boundary tables of docs/architecture.md, so the document is the one place the folder
 * rules are written and the test holds the code to it:
 *
 * - "## Folders": `| folder | job | may import |`. The first cell names, in backticks, a folder of
 *   `src/` (`engine/`), a file (`gateway.ts`), or `providers/*`: each subfolder of `providers/`
 *   without a row of its own, under one rule. A file belongs to the longest row that contains it.
 *   The last cell lists the rows it may import, comma-separated; a parenthesis is a remark;
 *   `nothing` means none, `everything` means any, `ingress/*` every subfolder row of `ingress/`.
 *   Rows outside `src/` (`web/`) are documentation only.
 * - "## Packages": `| package | only in |`: the rows whose files alone may import that package.
 */

export interface FolderRule {
  /** `engine/`, `providers/*`, `gateway.ts`. */
  name: string;
  /** null: everything. */
  mayImport: string[] | null;
}

export interface PackageRule {
  name: string;
  onlyIn: string[];
}

export interface BoundaryTables {
  folders: FolderRule[];
  packages: PackageRule[];
}

function readSection(markdown: string, heading: string): string[][] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start === -1) throw new Error(`docs/architecture.md has no "${heading}" section`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|")) continue;
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.every((cell) => /^-*$/.test(cell))) continue;
    rows.push(cells);
  }
  return rows.slice(1); // the header
}

function readCode(cell: string): string | null {
  return /^`([^`]+)`/.exec(cell)?.[1] ?? null;
}

/** `errors, storage (its ports), ingress/*` → ["errors/", "storage/", "ingress/*"]. */
function readList(cell: string): string[] | null {
  const text = cell
    .replace(/\([^)]*\)/g, "")
    .replace(/`/g, "")
    .trim();
  if (text === "everything") return null;
  if (text === "nothing" || text === "—" || text === "") return [];
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0)
    .map((item) => (item.endsWith(".ts") || item.endsWith("/") || item.endsWith("*") ? item : `${item}/`));
}

export function readBoundaryTables(markdown: string): BoundaryTables {
  const folders = readSection(markdown, "## Folders").flatMap((cells): FolderRule[] => {
    const name = readCode(cells[0] ?? "");
    if (!name) return [];
    return [{ name, mayImport: readList(cells.at(-1) ?? "") }];
  });
  const packages = readSection(markdown, "## Packages").flatMap((cells): PackageRule[] => {
    const name = readCode(cells[0] ?? "");
    if (!name) return [];
    return [{ name, onlyIn: readList(cells.at(-1) ?? "") ?? [] }];
  });
  return { folders, packages };
}
