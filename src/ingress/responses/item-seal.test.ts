import assert from "node:assert/strict";
import { test } from "node:test";
import { createItemSeal, deriveItemSealKey, MAX_SEALED_ITEM_BYTES } from "./item-seal.js";

const item = { type: "reasoning", summary: [], encrypted_content: "hi1.eyJrIjoiZ29vZ2xlIn0" };

test("a sealed id opens to its item under the same root secret, on any instance", () => {
  const sealed = createItemSeal(deriveItemSealKey("deployment-secret")).seal("rs_abc_0", item);
  assert.match(sealed, /^rs_abc_0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  const elsewhere = createItemSeal(deriveItemSealKey("deployment-secret"));
  assert.deepEqual(elsewhere.open(sealed), { kind: "item", item });
});

test("another key, a changed payload or tag, and plain ids do not open", () => {
  const seal = createItemSeal(deriveItemSealKey("deployment-secret"));
  const sealed = seal.seal("rs_abc_0", item);
  const [id, payload, tag] = sealed.split(".") as [string, string, string];
  assert.deepEqual(createItemSeal(deriveItemSealKey("other-secret")).open(sealed), { kind: "forged" });
  const forgedItem = Buffer.from(JSON.stringify({ ...item, encrypted_content: "x" })).toString("base64url");
  assert.deepEqual(seal.open(`${id}.${forgedItem}.${tag}`), { kind: "forged" });
  assert.deepEqual(seal.open(`${id}.${payload}.${tag.slice(0, -1)}A`), { kind: "forged" });
  assert.deepEqual(seal.open(`rs_other_1.${payload}.${tag}`), { kind: "forged" }, "the id is sealed too");
  assert.deepEqual(seal.open(`${id}.${payload}`), { kind: "forged" }, "a seal without its tag");
  assert.deepEqual(seal.open("rs_abc_0"), { kind: "plain" });
  assert.deepEqual(seal.open("msg_0123456789"), { kind: "plain" });
});

test("bounded: an item over the limit keeps its plain id; an overlong id is refused unread", () => {
  const seal = createItemSeal(deriveItemSealKey("s"));
  const large = {
    type: "message",
    content: [{ type: "output_text", text: "x".repeat(MAX_SEALED_ITEM_BYTES) }],
  };
  assert.equal(seal.seal("msg_abc_1", large), "msg_abc_1");
  const fits = {
    type: "message",
    content: [{ type: "output_text", text: "x".repeat(MAX_SEALED_ITEM_BYTES - 100) }],
  };
  assert.deepEqual(seal.open(seal.seal("msg_abc_1", fits)), { kind: "item", item: fits });
  const overlong = `msg_abc_1.${"A".repeat(MAX_SEALED_ITEM_BYTES * 2)}.${"A".repeat(22)}`;
  assert.deepEqual(seal.open(overlong), { kind: "forged" });
});
