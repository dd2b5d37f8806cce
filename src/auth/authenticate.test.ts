import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../errors/gateway-error.js";
import { createInProcessSharedState } from "../storage/shared-state/in-process-shared-state.js";
import type { Store } from "../storage/store.js";
import type { ApiKeyWithWorkspace, RequestSource } from "./accounts.js";
import { hashApiKey } from "./api-key.js";
import { createAuthenticator } from "./authenticate.js";
import { evictBeforePublish } from "./evict-before-publish.js";
import { isInternalTokenValid } from "./internal-token.js";

const SECRET = `hi-${"a".repeat(40)}`;

function createRecord(source: RequestSource, status: "active" | "disabled" = "active"): ApiKeyWithWorkspace {
  const now = new Date();
  return {
    key: {
      id: "key_1",
      workspaceId: "ws_1",
      name: "",
      display: "hi-…aaaa",
      status,
      allowedModels: null,
      expiresAt: null,
      memberId: null,
      source,
      createdAt: now,
    },
    workspace: { id: "ws_1", name: "W", balanceMicroUsd: 1, invoicing: false, locked: false, createdAt: now },
  };
}

/** A store double whose key lookup can be held open, to interleave it with an eviction. */
function createStore(initial: ApiKeyWithWorkspace) {
  const fake = {
    record: initial,
    lookups: 0,
    consumed: 0,
    hold: undefined as Promise<void> | undefined,
    store: {
      apiKeys: {
        async findByHash(hash: string) {
          assert.equal(hash, hashApiKey(SECRET));
          fake.lookups++;
          const record = fake.record;
          await fake.hold;
          return record;
        },
      },
      playgroundKeys: {
        async consume() {
          fake.consumed++;
          return fake.consumed === 1;
        },
      },
    } as unknown as Store,
  };
  return fake;
}

test("auth: a lookup that raced an eviction is not cached", async () => {
  const fake = createStore(createRecord("api"));
  const state = createInProcessSharedState();
  const authenticator = await createAuthenticator(fake.store, state);
  let release: () => void = () => {};
  fake.hold = new Promise((resolve) => {
    release = resolve;
  });
  const inFlight = authenticator.authenticate(SECRET);
  await new Promise((resolve) => setImmediate(resolve));
  // The key is disabled and announced while the lookup above still holds the old row.
  fake.record = createRecord("api", "disabled");
  authenticator.evict("key_1");
  release();
  fake.hold = undefined;
  await inFlight;
  await assert.rejects(
    authenticator.authenticate(SECRET),
    (error: GatewayError) => error.code === "invalid_api_key",
  );
  assert.equal(fake.lookups, 2, "the second request read the database again");
  await authenticator.close();
  await state.close();
});

test("auth: the admin service's publish evicts this instance's cache first", async () => {
  const fake = createStore(createRecord("api"));
  const state = createInProcessSharedState();
  const authenticator = await createAuthenticator(fake.store, state);
  await authenticator.authenticate(SECRET);
  fake.record = createRecord("api", "disabled");
  const failing: typeof state = { ...state, publish: async () => Promise.reject(new Error("redis down")) };
  await assert.rejects(
    evictBeforePublish(failing, authenticator).publish("gateway:key-changed", '{"keyId":"key_1"}'),
  );
  await assert.rejects(
    authenticator.authenticate(SECRET),
    (error: GatewayError) => error.code === "invalid_api_key",
  );
  await authenticator.close();
  await state.close();
});

test("auth: one-time keys are consumed in the database on every use, cache or not", async () => {
  const fake = createStore(createRecord("playground"));
  const state = createInProcessSharedState();
  const authenticator = await createAuthenticator(fake.store, state);
  await authenticator.authenticate(SECRET);
  const second = await authenticator.authenticate(SECRET).catch((error: unknown) => error);
  assert.ok(second instanceof GatewayError && second.code === "invalid_api_key");
  assert.equal(fake.lookups, 1, "the record came from the cache");
  assert.equal(fake.consumed, 2, "the consumption did not");
  await authenticator.close();
  await state.close();
});

test("internal token: equal secrets only; missing or unset never matches", () => {
  assert.equal(isInternalTokenValid("s3cret", "s3cret"), true);
  assert.equal(isInternalTokenValid("s3creT", "s3cret"), false);
  assert.equal(isInternalTokenValid("s3cret ", "s3cret"), false);
  assert.equal(isInternalTokenValid(undefined, "s3cret"), false);
  assert.equal(isInternalTokenValid("", ""), false);
  assert.equal(isInternalTokenValid(undefined, undefined), false);
});
