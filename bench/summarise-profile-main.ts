/**
 * `node --import tsx bench/summarise-profile-main.ts [file-or-folder] [--top N]`: prints the self-time
 * summary of a `.cpuprofile` (default: the newest in bench/results/profiles).
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
const summary = summariseCpuProfile(readCpuProfile(path), readIntegerFlag("top", 25));
process.stdout.write(formatProfileSummary(summary, path));
