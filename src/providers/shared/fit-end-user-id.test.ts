import assert from "node:assert/strict";
import { test } from "node:test";
import { fitEndUserId, MAX_END_USER_ID_LENGTH } from "./fit-end-user-id.js";

test("an identifier that fits goes unchanged; a longer one becomes a stable hash that fits", () => {
  assert.equal(fitEndUserId("user-1234"), "user-1234");
  assert.equal(fitEndUserId("x".repeat(64)), "x".repeat(64));
  const claudeCodeId = JSON.stringify({
    device_id: "a".repeat(64),
    account_uuid: "",
    session_id: "0b8e3c5e-1d7c-4e0f-9a56-3f1e2d4c5b6a",
  });
  assert.ok(claudeCodeId.length > 140);
  const fitted = fitEndUserId(claudeCodeId);
  assert.ok(fitted.length <= MAX_END_USER_ID_LENGTH);
  assert.equal(fitEndUserId(claudeCodeId), fitted, "the same user gets the same value every time");
  assert.notEqual(fitEndUserId(`${claudeCodeId} `), fitted);
});
