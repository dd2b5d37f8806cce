/**
 * The fixtures are redistributed third-party data: every recorded file must have its origin in
 * manifest.json and every source repository its licence file beside the data, so a recording added
 * without them fails here rather than shipping unattributed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { OPENAI_OPENAPI_PATH, RECORDED_DIR, recordedPath } from "./fixture-paths.js";

interface ManifestEntry {
  file: string;
  source: { repo: string; path: string; commit: string; licence: string };
}

/** The source repositories the recordings come from, and the licence file kept for each. */
const LICENCE_FILES: Record<string, string> = {
  "vercel/ai": "LICENSE-vercel-ai",
  "openai/openai-python": "LICENSE-openai-python",
  "pydantic/pydantic-ai": "LICENSE-pydantic-ai",
};

function recordedDataFiles(folder: string = RECORDED_DIR): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return recordedDataFiles(path);
    // Files at the top are the folder's own description, licences and attributes, not recordings.
    return folder === RECORDED_DIR ? [] : [relative(RECORDED_DIR, path)];
  });
}

const manifest = JSON.parse(readFileSync(recordedPath("manifest.json"), "utf8")) as {
  files: ManifestEntry[];
};

test("every recorded file is in manifest.json with its source, and every manifest entry exists", () => {
  const listed = manifest.files.map((entry) => entry.file).sort();
  assert.deepEqual(recordedDataFiles().sort(), listed);
  for (const entry of manifest.files) {
    assert.ok(entry.source.repo && entry.source.path && entry.source.commit, entry.file);
  }
});

test("every source repository of the recordings has its licence file beside them", () => {
  const repos = new Set(manifest.files.map((entry) => entry.source.repo));
  assert.deepEqual([...repos].sort(), Object.keys(LICENCE_FILES).sort());
  for (const file of Object.values(LICENCE_FILES)) assert.ok(existsSync(recordedPath(file)), file);
});

test("OpenAI's OpenAPI document is there with its licence", () => {
  assert.ok(statSync(OPENAI_OPENAPI_PATH).size > 0);
  assert.ok(existsSync(join(OPENAI_OPENAPI_PATH, "..", "LICENSE-openai-openapi")));
});
