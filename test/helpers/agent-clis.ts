/**
 * The released agent CLIs the client suite runs (test/clients), installed by
 * scripts/install-tools.sh into `.tools/` at pinned versions. Both ship a native binary in a
 * platform package, run here directly (no Node needed). Absent tools skip the suite with the
 * command that installs them; under CI=true (.ci/run installs them) their absence fails.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const TOOLS = new URL("../../.tools/node_modules/", import.meta.url).pathname;

export const CLAUDE_CODE_VERSION = "2.1.332";
export const CODEX_VERSION = "0.171.0";

export const CLAUDE_CODE_BINARY = join(TOOLS, "@anthropic-ai/claude-code-linux-x64/claude");
export const CODEX_BINARY = join(TOOLS, "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
/** Codex's launcher puts its bundled ripgrep on PATH; the suite does the same. */
export const CODEX_PATH_DIR = join(
  TOOLS,
  "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path",
);

/**
 * `undefined` when `binary` is installed, else the reason to skip. Throws under CI=true, where
 * .ci/run installs the tools before the tests.
 */
export function missingCli(binary: string, name: string): string | undefined {
  if (existsSync(binary)) return undefined;
  const reason = `${name} is not installed in .tools/ (run scripts/install-tools.sh) — skipping`;
  if (process.env.CI === "true") throw new Error(reason.replace(" — skipping", " — required when CI=true"));
  return reason;
}
