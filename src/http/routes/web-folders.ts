/** Where the gateway's web pages live: `web/` at the project root, from `src/` and from `dist/` alike. */
import { fileURLToPath } from "node:url";

export function resolveWebFolder(name: "console" | "docs"): string {
  return fileURLToPath(new URL(`../../../web/${name}/`, import.meta.url));
}
