/**
 * `node --import tsx bench/summarise-profile-main.ts [file-or-folder] [--top N] [--skip-ms MS]`: prints the self-time
 * summary of a `.cpuprofile` (default: the newest in bench/results/profiles), optionally without its
 * first MS milliseconds (the process's start).
 */
import { readIntegerFlag } from "./child-entry.js";
import {
  findNewestProfile,
  formatProfileSummary,
  readCpuProfile,
  summariseCpuProfile,
} from "./summarise-profile.js";

const given = process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : undefined;
const path = findNewestProfile(given ?? new URL("results/profiles", import.meta.url).pathname);
if (!path) {
  process.stderr.write("No .cpuprofile found (run `npm run bench -- --profile` first)\n");
  process.exit(1);
}
const summary = summariseCpuProfile(readCpuProfile(path), readIntegerFlag("top", 25), readOptionalMs());

function readOptionalMs(): number {
  return process.argv.includes("--skip-ms") ? readIntegerFlag("skip-ms", 1) : 0;
}
process.stdout.write(formatProfileSummary(summary, path));
