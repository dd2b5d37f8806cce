/** Writes a run's JSON and markdown under bench/results/ (git-ignored), timestamped, plus `latest.*`. */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const RESULTS_DIR = new URL("results", import.meta.url).pathname;

export async function writeResults(
  stamp: string,
  json: unknown,
  markdown: string,
): Promise<{ json: string; markdown: string }> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const base = join(RESULTS_DIR, `bench-${stamp}`);
  const paths = { json: `${base}.json`, markdown: `${base}.md` };
  await writeFile(paths.json, `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(paths.markdown, markdown);
  await copyFile(paths.json, join(RESULTS_DIR, "latest.json"));
  await copyFile(paths.markdown, join(RESULTS_DIR, "latest.md"));
  return paths;
}

/** `2026-11-22T00-49-26Z`: sortable and safe in file names. */
export function createStamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}
