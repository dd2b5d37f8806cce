/**
 * Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) and ranks functions by self time,
 * plus the same time grouped by where the code lives (our `src/` folders, each npm package, Node
 * internals, WASM, GC). Self time per sample is the gap to the next sample, as DevTools counts it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FunctionCost {
  name: string;
  location: string;
  category: string;
  /** The caller that accounts for most of this function's self time (`name (group)`). */
  mainCaller?: string;
  selfMs: number;
  /** Share of the busy time (everything but `(idle)`), percent. */
  selfPercent: number;
}

export interface CategoryCost {
  category: string;
  selfMs: number;
  selfPercent: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  top: FunctionCost[];
  /** Self time by where the function lives. */
  categories: CategoryCost[];
  /**
   * Time charged to the nearest npm package or `src/` folder on the stack: native calls, WASM and
   * Node internals count for the code that called them (PGlite's WASM and file writes count for
   * PGlite, socket writes for the HTTP server that made them). The ranking of what costs CPU.
   */
  owners: CategoryCost[];
}

const ROOT_URL = new URL("..", import.meta.url).href;

/**
 * `skipMs` leaves out the first milliseconds of the profile: the gateway's start (module loading,
 * PGlite's initdb and migrations) would otherwise be charged to the steady state the bench measures.
 */
export function summariseCpuProfile(profile: CpuProfile, topCount = 25, skipMs = 0): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const selfMicros = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let elapsedMicros = 0;
  for (let index = 0; index < samples.length; index += 1) {
    elapsedMicros += Math.max(0, deltas[index] ?? 0);
    if (elapsedMicros < skipMs * 1000) continue;
    const duration = index + 1 < deltas.length ? Math.max(0, deltas[index + 1]) : 0;
    selfMicros.set(samples[index], (selfMicros.get(samples[index]) ?? 0) + duration);
  }

  const byFunction = new Map<
    string,
    { name: string; location: string; category: string; micros: number; callers: Map<string, number> }
  >();
  const byCategory = new Map<string, number>();
  let idleMicros = 0;
  let totalMicros = 0;
  for (const [id, micros] of selfMicros) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    totalMicros += micros;
    if (frame.functionName === "(idle)") {
      idleMicros += micros;
      continue;
    }
    const category = categorise(frame.url, frame.functionName);
    const location = frame.url ? `${shortenUrl(frame.url)}:${frame.lineNumber + 1}` : "";
    const name = frame.functionName || "(anonymous)";
    const key = `${name}|${location}`;
    const entry = byFunction.get(key) ?? { name, location, category, micros: 0, callers: new Map() };
    entry.micros += micros;
    const caller = describeCaller(nodes.get(parents.get(id) ?? -1)?.callFrame);
    entry.callers.set(caller, (entry.callers.get(caller) ?? 0) + micros);
    byFunction.set(key, entry);
    byCategory.set(category, (byCategory.get(category) ?? 0) + micros);
  }
  const ownerOf = createOwnerLookup(nodes, parents);
  const byOwner = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    if (nodes.get(id)?.callFrame.functionName === "(idle)") continue;
    const owner = ownerOf(id);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros);
  }
  const busyMicros = totalMicros - idleMicros;
  const percent = (micros: number) => (busyMicros > 0 ? (100 * micros) / busyMicros : 0);
  return {
    totalMs: totalMicros / 1000,
    idleMs: idleMicros / 1000,
    busyMs: busyMicros / 1000,
    top: [...byFunction.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, topCount)
      .map((entry) => ({
        name: entry.name,
        location: entry.location,
        category: entry.category,
        mainCaller: [...entry.callers.entries()].sort((a, b) => b[1] - a[1])[0]?.[0],
        selfMs: entry.micros / 1000,
        selfPercent: percent(entry.micros),
      })),
    categories: rank(byCategory, percent),
    owners: rank(byOwner, percent),
  };
}

function rank(totals: Map<string, number>, percent: (micros: number) => number): CategoryCost[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([category, micros]) => ({ category, selfMs: micros / 1000, selfPercent: percent(micros) }));
}

/** An owner is code someone can change: one of our folders or an npm package. */
function isOwner(category: string): boolean {
  return !category.startsWith("node:") && !category.startsWith("(") && category !== "wasm";
}

function createOwnerLookup(
  nodes: Map<number, ProfileNode>,
  parents: Map<number, number>,
): (id: number) => string {
  const memo = new Map<number, string>();
  return (leaf) => {
    const walked: number[] = [];
    let owner: string | undefined;
    // Bounded by the stack depth; memoised, so each node is resolved once.
    for (let id: number | undefined = leaf; id !== undefined; id = parents.get(id)) {
      const known = memo.get(id);
      if (known !== undefined) {
        owner = known;
        break;
      }
      walked.push(id);
      const frame = nodes.get(id)!.callFrame;
      const category = categorise(frame.url, frame.functionName);
      if (isOwner(category)) {
        owner = category;
        break;
      }
    }
    // "" marks stacks without an owner (runtime, GC, Node internals alone): those keep the leaf's group.
    for (const id of walked) memo.set(id, owner ?? "");
    if (owner) return owner;
    const frame = nodes.get(leaf)!.callFrame;
    return categorise(frame.url, frame.functionName);
  };
}

/** Where a function lives: `src/<folder>`, an npm package, `node:<area>`, `wasm`, or a VM pseudo-frame. */
export function categorise(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const packageMatch = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packageMatch) return packageMatch[1];
  if (url.startsWith("wasm://")) return "wasm";
  if (url.startsWith("node:")) {
    const parts = url.slice(5).split("/");
    if (parts[0] !== "internal") return `node:${parts[0]}`;
    if (parts[1] === "deps") return `node:deps/${parts[2] ?? ""}`;
    return `node:internal/${parts[1] ?? ""}`;
  }
  // The compiled gateway (dist/, scripts/build.mjs) mirrors src/: charge it to the same folders.
  const relative = toProjectPath(url).replace(/^dist\//, "src/");
  const parts = relative.split("/");
  if (parts[0] === "src" && parts.length > 2) return `src/${parts[1]}`;
  return parts.length > 1 ? parts[0] : relative;
}

/**
 * `src/...` or `bench/...` of a project file, whichever checkout it ran from (`--gateway-dir` runs
 * another tree), else the URL as it is.
 */
function toProjectPath(url: string): string {
  if (url.startsWith(ROOT_URL)) return url.slice(ROOT_URL.length);
  const match = /\/((?:src|dist|bench|test)\/.*)$/.exec(url);
  return url.startsWith("file://") && match ? match[1] : url;
}

function describeCaller(frame: ProfileNode["callFrame"] | undefined): string {
  if (!frame) return "–";
  return `${frame.functionName || "(anonymous)"} (${categorise(frame.url, frame.functionName)})`;
}

function shortenUrl(url: string): string {
  const packageIndex = url.lastIndexOf("/node_modules/");
  if (packageIndex >= 0) return url.slice(packageIndex + "/node_modules/".length);
  return toProjectPath(url);
}

/**
 * The newest main-thread `.cpuprofile` in `pathOrDirectory` or its subfolders (a file path is
 * returned as is). With `--import tsx` Node also profiles the module-loader thread; V8 names files
 * `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, and thread 0 is the main thread.
 */
export function findNewestProfile(pathOrDirectory: string): string | undefined {
  const stats = statSync(pathOrDirectory, { throwIfNoEntry: false });
  if (!stats) return undefined;
  if (stats.isFile()) return pathOrDirectory;
  const files: string[] = [];
  for (const entry of readdirSync(pathOrDirectory, { withFileTypes: true })) {
    const path = join(pathOrDirectory, entry.name);
    if (entry.isFile() && entry.name.endsWith(".cpuprofile")) files.push(path);
    if (entry.isDirectory()) {
      for (const name of readdirSync(path)) if (name.endsWith(".cpuprofile")) files.push(join(path, name));
    }
  }
  const newestFirst = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return newestFirst.find((path) => /\.\d+\.0\.\d+\.cpuprofile$/.test(path)) ?? newestFirst[0];
}

export function readCpuProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
}

/** Markdown: the busy/idle split, the top functions, the categories. */
export function formatProfileSummary(summary: ProfileSummary, source: string): string {
  const ms = (value: number) => value.toFixed(0);
  const pct = (value: number) => value.toFixed(1);
  const table = (title: string, rows: CategoryCost[]) => [
    `| ${title} | ms | % of busy |`,
    "|---|---:|---:|",
    ...rows
      .slice(0, 25)
      .map((entry) => `| ${entry.category} | ${ms(entry.selfMs)} | ${pct(entry.selfPercent)} |`),
    "",
  ];
  return [
    `Profile \`${source}\`: ${ms(summary.totalMs)} ms sampled, ${ms(summary.busyMs)} ms busy, ${ms(summary.idleMs)} ms idle. Percentages are of busy time.`,
    "",
    "| # | self ms | self % | function | where | group | main caller |",
    "|---:|---:|---:|---|---|---|---|",
    ...summary.top.map(
      (entry, index) =>
        `| ${index + 1} | ${ms(entry.selfMs)} | ${pct(entry.selfPercent)} | \`${entry.name}\` | ${entry.location} | ${entry.category} | ${entry.mainCaller ?? "–"} |`,
    ),
    "",
    "Time charged to the nearest package or `src/` folder on the stack (natives, WASM and Node internals count for their caller):",
    "",
    ...table("owner", summary.owners),
    "Self time by group:",
    "",
    ...table("group", summary.categories),
  ].join("\n");
}
