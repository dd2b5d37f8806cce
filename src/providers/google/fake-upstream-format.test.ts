/**
 * Guards the fake Gemini upstream itself (no official Gemini client is installed to do it): its
 * framing and shapes must be those of the recorded traffic in `test/fixtures/recorded/google/gemini/`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  buildGeminiError,
  buildGeminiTextChunks,
  buildGenerateContentResponse,
  DEFAULT_GEMINI_TEXT,
  type FakeGoogleUpstream,
  fakeGoogleReply,
  startFakeGoogleUpstream,
} from "../../../test/helpers/fake-google-upstream.js";
import { recordedPath } from "../../../test/helpers/fixture-paths.js";

const fixtureDir = recordedPath("google", "gemini");

let upstream: FakeGoogleUpstream;

before(async () => {
  upstream = await startFakeGoogleUpstream();
});

after(async () => {
  await upstream.close();
});

function post(path: string, body: unknown = { contents: [] }): Promise<Response> {
  return fetch(`${upstream.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "AIzaSyFake" },
    body: JSON.stringify(body),
  });
}

/** Keys of every object in a JSON value, prefixed by their path (array indexes elided). */
function keyPaths(value: unknown, prefix = "", found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keyPaths(item, prefix, found);
  else if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      found.add(`${prefix}${key}`);
      keyPaths(child, `${prefix}${key}.`, found);
    }
  }
  return found;
}

test("SSE: CRLF data frames, no event names, no terminator, text/event-stream", async () => {
  upstream.enqueue(fakeGoogleReply.sse(buildGeminiTextChunks(["a", "b"])));
  const response = await post("/models/gemini-x:streamGenerateContent?alt=sse");
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const body = await response.text();
  assert.match(body, /^(data: \{[^\r\n]*\}\r\n\r\n){2}$/);
  assert.doesNotMatch(body, /\[DONE\]|event:/);
  const last = JSON.parse(body.trim().split("\r\n\r\n").at(-1)!.slice(6));
  assert.equal(last.candidates[0].finishReason, "STOP");
});

test("builders produce only fields the recordings have", async () => {
  const recorded = new Set<string>();
  for (const file of ["stream-text.response.sse", "stream-function-call-thought-signature.1.response.sse"]) {
    for (const line of readFileSync(join(fixtureDir, file), "utf8").split("\r\n")) {
      if (line.startsWith("data:")) keyPaths(JSON.parse(line.slice(5)), "", recorded);
    }
  }
  for (const chunk of [...buildGeminiTextChunks(["x", "y"]), buildGenerateContentResponse()]) {
    for (const path of keyPaths(chunk)) assert.ok(recorded.has(path), `${path} appears in the recording`);
  }
  const recordedError = JSON.parse(readFileSync(join(fixtureDir, "google-429-retry-info.json"), "utf8"));
  const built = buildGeminiError(429, "RESOURCE_EXHAUSTED", "quota", recordedError.error.details);
  assert.deepEqual([...keyPaths(built)].sort(), [...keyPaths(recordedError)].sort());
});

test("default replies follow the method in the path; requests are recorded", async () => {
  const before = upstream.requests.length;
  const streamed = await (await post("/models/gemini-x:streamGenerateContent?alt=sse")).text();
  assert.ok(streamed.includes(DEFAULT_GEMINI_TEXT));
  const response = await post("/models/gemini-x:generateContent", { contents: [{ role: "user" }] });
  const json = (await response.json()) as {
    candidates: Array<{ content: { parts: Array<{ text: string }> } }>;
  };
  assert.equal(json.candidates[0]?.content.parts[0]?.text, DEFAULT_GEMINI_TEXT);
  const recorded = upstream.requests.slice(before);
  assert.deepEqual(
    recorded.map((request) => [request.method, request.path]),
    [
      ["POST", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"],
      ["POST", "/v1beta/models/gemini-x:generateContent"],
    ],
  );
  assert.equal(recorded[1]?.headers["x-goog-api-key"], "AIzaSyFake");
  assert.deepEqual(recorded[1]?.body, { contents: [{ role: "user" }] });
});

test("errors carry the google.rpc envelope with the given status", async () => {
  upstream.enqueue(fakeGoogleReply.error(503, buildGeminiError(503, "UNAVAILABLE", "try later")));
  const response = await post("/models/gemini-x:generateContent");
  assert.equal(response.status, 503);
  assert.deepEqual(await response.json(), {
    error: { code: 503, message: "try later", status: "UNAVAILABLE" },
  });
});
