/**
 * Where the data the tests replay lives: test/fixtures/ in this repository (its README.md names the
 * origin and licence of every file). Tests find it only through these paths, and the files are part
 * of every clone, so a missing one is a failing test, never a skipped one.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES_ROOT = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** Recorded provider traffic: `<provider>/<format>/` folders beside `manifest.json` and `README.md`. */
export const RECORDED_DIR = join(FIXTURES_ROOT, "recorded");

/** A folder or file of the recorded traffic, e.g. `recordedPath("openai", "chat")`. */
export function recordedPath(...segments: string[]): string {
  return join(RECORDED_DIR, ...segments);
}

/** OpenAI's published OpenAPI document, for validating what the gateway sends in OpenAI's formats. */
export const OPENAI_OPENAPI_PATH = join(FIXTURES_ROOT, "specs", "openai-openapi.yaml");

/** Requests agent CLIs really sent, recorded by the client suite (`clients/README.md`). */
export const CLIENT_RECORDINGS_DIR = join(FIXTURES_ROOT, "clients");
