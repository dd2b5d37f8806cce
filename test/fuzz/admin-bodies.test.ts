/**
 * Fuzzed bodies, path ids and query strings for the endpoints beside the generation ones: the
 * admin API under /internal/admin, POST /api/v1/playground-keys and GET /api/v1/generation?id=,
 * against a real gateway on loopback. Properties: never a 5xx, an answer within a deadline, the
 * common envelope with a catalog code, a field error naming the mutated field in `param`, and a
 * refused request changes nothing (workspaces, keys, limits, balance as they were).
 * Run counts, seeds and replay: test/helpers/fuzz.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { checkProperty } from "../helpers/fuzz.js";
import { checkAnswer } from "../helpers/fuzz-answers.js";
import {
  isWithinParam,
  type Mutation,
  malformedBodyTexts,
  mutatedBodies,
  mutatedParam,
  oddStrings,
} from "../helpers/fuzz-bodies.js";
import { createRawClient, type RawClient } from "../helpers/raw-http.js";
import { startTestGateway, TEST_MODEL, type TestGateway } from "../helpers/test-gateway.js";

const DEADLINE_MS = 10_000;
const RUNS = 100;

/** Percent-encodes the UTF-8 of `text` byte by byte (encodeURIComponent throws on lone surrogates). */
function encodeBytes(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).padStart(2, "0").toUpperCase()}`,
    )
    .join("");
}

/**
 * Path segments and query values: real ids, odd text, and escapes no encoder produces. Kept under
 * 4 KB: a request line beyond Node's header limit (16 KB) is refused by Node itself (431).
 */
function idTexts(realIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...realIds).map(encodeBytes) },
    { weight: 3, arbitrary: oddStrings.map((text) => encodeBytes(text).slice(0, 4000)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("%00", "%ED%A0%80", "%C0%AF", "%zz", "%", "%E2%82", "..%2F..%2F", "%FF%FE"),
    },
  );
}

interface AdminTarget {
  workspaceId: string;
  keyId: string;
}

interface Snapshot {
  workspaces: number;
  workspace: unknown;
  keys: unknown;
  limits: unknown;
}

async function takeSnapshot(context: TestGateway, target: AdminTarget): Promise<Snapshot> {
  const { store } = context.gateway;
  return {
    workspaces: await store.workspaces.count(),
    workspace: await store.workspaces.get(target.workspaceId),
    keys: await store.apiKeys.list(target.workspaceId),
    limits: await store.keyLimits.get(target.keyId),
  };
}

interface FuzzCall {
  method: string;
  path: string;
  body?: string | Uint8Array;
  contentType?: string;
  /** The field a body error must name, when one field was mutated (and the path's id is real). */
  mutation?: Mutation;
}

/** A body route: its method and path (ids fuzzed), and its valid bodies. */
interface BodyRoute {
  method: string;
  path: (id: string) => string;
  valid: (target: AdminTarget) => fc.Arbitrary<Record<string, unknown>>;
}

/** Replaced in a body by a number no earlier request of the run used. */
const UNIQUE_MARK = "@@UNIQUE@@";
let sentCalls = 0;

const usd = fc.constantFrom<unknown>("5", "0.25", 1, "0.000001");

const BODY_ROUTES: BodyRoute[] = [
  {
    method: "POST",
    path: () => "/internal/admin/workspaces",
    valid: () =>
      fc.record(
        {
          // A name of its own per request (sendAdminCall numbers it): a duplicate name is refused
          // unless asked for, and shrinking repeats the same bodies.
          name: fc.uuid().map((id) => `fuzz-${id}${UNIQUE_MARK}`),
          credits_usd: usd,
          invoicing: fc.boolean(),
        },
        { requiredKeys: ["name"] },
      ),
  },
  {
    method: "POST",
    path: (id) => `/internal/admin/workspaces/${id}/credit`,
    valid: () => fc.record({ usd }),
  },
  {
    method: "PATCH",
    path: (id) => `/internal/admin/workspaces/${id}`,
    valid: () =>
      // Both fields, so deleting one still leaves an update (an empty PATCH names no one field).
      fc.record({ invoicing: fc.boolean(), locked: fc.constant(false) }),
  },
  {
    method: "POST",
    path: () => "/internal/admin/keys",
    valid: (target) =>
      fc.record(
        {
          workspace_id: fc.constant(target.workspaceId),
          name: fc.constant("k"),
          models: fc.constant([TEST_MODEL]),
          expires_at: fc.constantFrom("2099-01-01", "2099-01-01T00:00:00Z"),
          member_id: fc.constant("m1"),
          daily_limit_usd: usd,
          monthly_limit_usd: usd,
          total_limit_usd: usd,
          requests_per_minute: fc.constant(60),
        },
        { requiredKeys: ["workspace_id"] },
      ),
  },
  {
    method: "PATCH",
    path: (id) => `/internal/admin/keys/${id}`,
    valid: () =>
      fc.record(
        {
          daily_limit_usd: usd,
          monthly_limit_usd: fc.constant(null),
          total_limit_usd: usd,
          requests_per_minute: fc.constant(120),
          models: fc.constant([TEST_MODEL]),
          actor: fc.constant("fuzz"),
        },
        { requiredKeys: ["daily_limit_usd"] },
      ),
  },
  {
    method: "POST",
    path: (id) => `/internal/admin/keys/${id}/reset-total`,
    valid: () => fc.record({ actor: fc.constant("fuzz") }),
  },
  {
    method: "POST",
    path: () => "/api/v1/playground-keys",
    valid: (target) =>
      fc.record(
        {
          workspace_id: fc.constant(target.workspaceId),
          user_id: fc.constant("user-1"),
          source: fc.constantFrom("playground", "chat"),
        },
        { requiredKeys: ["workspace_id", "user_id"] },
      ),
  },
];

function callsFor(target: AdminTarget): fc.Arbitrary<FuzzCall> {
  const workspaceIds = idTexts([target.workspaceId]);
  const keyIds = idTexts([target.keyId]);
  const bodyCalls = BODY_ROUTES.map((route) => {
    const ids = route.path("X").includes("/keys/") ? keyIds : workspaceIds;
    const mutated = fc.tuple(ids, mutatedBodies(route.valid(target))).map(
      ([id, { mutation, text }]): FuzzCall => ({
        method: route.method,
        path: route.path(id),
        body: text,
        contentType: "application/json",
        // With an odd id in the path, the error may rightly be about the id.
        ...([target.workspaceId, target.keyId].includes(id) || !route.path("X").includes("X")
          ? { mutation }
          : {}),
      }),
    );
    const malformed = fc.tuple(ids, malformedBodyTexts).map(
      ([id, body]): FuzzCall => ({
        method: route.method,
        path: route.path(id),
        body,
        contentType: "application/json",
      }),
    );
    return fc.oneof({ weight: 3, arbitrary: mutated }, { weight: 1, arbitrary: malformed });
  });
  const keyActions = fc
    .tuple(fc.constantFrom("disable", "enable", "revoke", "frobnicate"), keyIds)
    .map(([action, id]): FuzzCall => ({ method: "POST", path: `/internal/admin/keys/${id}/${action}` }));
  const reads = fc.oneof(
    keyIds.map((id): FuzzCall => ({ method: "GET", path: `/internal/admin/keys/${id}` })),
    workspaceIds.map((id): FuzzCall => ({ method: "GET", path: `/internal/admin/keys?workspace_id=${id}` })),
    fc.constantFrom<FuzzCall>(
      { method: "GET", path: "/internal/admin/keys" },
      { method: "GET", path: "/internal/admin/keys?workspace_id[]=x" },
      { method: "GET", path: "/internal/admin/keys?workspace_id=a&workspace_id=b" },
      { method: "DELETE", path: "/internal/admin/workspaces" },
    ),
  );
  return fc.oneof(...bodyCalls, keyActions, reads);
}

function lookupQueries(): fc.Arbitrary<string> {
  return fc.oneof(
    idTexts(["gen_x"]).map((id) => `?id=${id}`),
    fc.constantFrom(
      "",
      "?",
      "?id",
      "?id=",
      "?id[]=x",
      "?id=a&id=b",
      "?ID=x",
      `?id=${"9".repeat(10_000)}`.slice(0, 8000),
    ),
  );
}

/** A field error names the mutated field, a field inside it, or the object that holds it. */
function isRelatedParam(param: string, mutated: string | null): boolean {
  return mutated === null || isWithinParam(param, mutated) || isWithinParam(mutated, param);
}

async function sendAdminCall(context: TestGateway, client: RawClient, target: AdminTarget, call: FuzzCall) {
  const before = await takeSnapshot(context, target);
  const headers: Record<string, string> = { "x-internal-token": context.gateway.internalSecret };
  if (call.contentType) headers["content-type"] = call.contentType;
  sentCalls++;
  const body = typeof call.body === "string" ? call.body.replaceAll(UNIQUE_MARK, `-${sentCalls}`) : call.body;
  const answer = await client.send({ ...call, body, headers, deadlineMs: DEADLINE_MS });
  const bodyText = call.body === undefined ? "" : Buffer.from(call.body).toString("utf8");
  const what = `${call.method} ${call.path.slice(0, 200)} ${bodyText.slice(0, 300)}`;
  const error = checkAnswer(answer, "common", what);
  if (error === undefined) return;
  assert.deepEqual(await takeSnapshot(context, target), before, `a refused request changed state: ${what}`);
  if (call.mutation !== undefined && error.code === "invalid_request") {
    const mutated = mutatedParam(call.mutation);
    if (mutated !== null)
      assert.ok(error.param, `field error without param (mutated ${mutated}): ${what} → ${error.message}`);
    if (error.param) {
      assert.ok(
        isRelatedParam(error.param, mutated),
        `param ${error.param} for ${mutated}: ${what} → ${error.message}`,
      );
    }
  }
}

test("fuzzed admin API, playground-key and generation-lookup requests [embedded]", async (t) => {
  const context = await startTestGateway("embedded");
  const client = createRawClient(context.url);
  try {
    const workspace = await context.admin.createWorkspace({ name: "fuzz-admin", creditsUsd: "100" });
    const { key } = await context.admin.createKey({ workspaceId: workspace.id, name: "fuzz" });
    const target: AdminTarget = { workspaceId: workspace.id, keyId: key.id };

    await t.test("admin API and playground keys", async (t) => {
      await checkProperty(
        t,
        fc.asyncProperty(callsFor(target), (call) => sendAdminCall(context, client, target, call)),
        { runs: RUNS * 3, timeoutMs: DEADLINE_MS + 1000 },
      );
    });

    await t.test("GET /api/v1/generation?id=", async (t) => {
      await checkProperty(
        t,
        fc.asyncProperty(lookupQueries(), async (query) => {
          const answer = await client.send({
            method: "GET",
            path: `/api/v1/generation${query}`,
            headers: { authorization: `Bearer ${context.apiKey}` },
            deadlineMs: DEADLINE_MS,
          });
          const error = checkAnswer(answer, "common", `GET /api/v1/generation${query.slice(0, 200)}`);
          assert.ok(error, `an odd id found a record: ${query}`);
          assert.equal(error.code, "invalid_request");
          assert.equal(error.param, "id");
        }),
        { runs: RUNS, timeoutMs: DEADLINE_MS + 1000 },
      );
    });
  } finally {
    client.close();
    await context.close();
  }
});
