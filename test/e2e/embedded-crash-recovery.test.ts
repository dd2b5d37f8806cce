/**
 * Embedded mode answers before a request's usage record reaches PGlite (the usage journal,
 * docs/durability.md). This is the promise end to end: a real gateway process on a data folder
 * answers streamed and non-streamed requests, is killed with SIGKILL right after the last answer,
 * and the next start on the same folder has every record, final, with the balance debited once each.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import { openStoreWithSqlClient } from "../../src/storage/open-store.js";
import { prepareEmbeddedGateway, startGatewayProcess } from "../helpers/gateway-process.js";
import {
  chatBody,
  createLimitsConfig,
  REQUEST_COST_MICRO_USD,
  startPricedUpstream,
} from "../helpers/limits-cluster.js";

const NON_STREAMED = 30;
const STREAMED = 10;

// Both places PGlite can run (GATEWAY_PGLITE_THREAD): in a worker thread the records are written
// by another thread, and SIGKILL ends both at once.
for (const thread of ["main", "worker"] as const) {
  test(`a gateway killed right after answering loses no usage record: the next start has them all, debited once (PGlite thread: ${thread})`, async (t) => {
    const upstream = await startPricedUpstream({ delayMs: 5, pieceDelayMs: 2 });
    t.after(() => upstream.close());
    const setup = await prepareEmbeddedGateway(createLimitsConfig(upstream.baseUrl), {
      LOG_LEVEL: "info",
      FAKE_UPSTREAM_KEY: "sk-upstream",
      GATEWAY_PGLITE_THREAD: thread,
    });
    t.after(() => setup.cleanup());
    const { env, dataDir, secret } = setup;

    const first = await startGatewayProcess({ env });
    t.after(() => first.stop(0));
    await first.waitForOutput(new RegExp(`"pgliteThread":"${thread}".*"gateway listening"`));
    const admin = createHttpAdminClient(first.url, secret);
    const workspace = await admin.createWorkspace({ name: "crash", creditsUsd: "1" });
    const { secret: apiKey } = await admin.createKey({ workspaceId: workspace.id });
    const send = async (stream: boolean) => {
      const response = await fetch(`${first.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: chatBody(stream ? { stream: true } : {}),
      });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      if (stream) assert.match(text, /data: \[DONE\]/);
      return response.headers.get("x-request-id")!;
    };
    const ids = await Promise.all([
      ...Array.from({ length: NON_STREAMED }, () => send(false)),
      ...Array.from({ length: STREAMED }, () => send(true)),
    ]);
    // No shutdown: nothing gets the chance to write what is still only journaled.
    process.kill(first.pid, "SIGKILL");
    assert.match(await first.stop(0), /signal=SIGKILL/);

    const second = await startGatewayProcess({ env });
    try {
      for (const id of ids) {
        const response = await fetch(`${second.url}/api/v1/generation?id=${id}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        const body = (await response.json()) as { data?: { status?: string } };
        assert.equal(response.status, 200, `${id}: ${JSON.stringify(body)}`);
        assert.equal(body.data?.status, "ok", id);
      }
    } finally {
      await second.stop();
    }

    const { store, client } = await openStoreWithSqlClient({ dataDir });
    try {
      const after = await store.workspaces.get(workspace.id);
      assert.equal(after?.balanceMicroUsd, 1_000_000 - ids.length * REQUEST_COST_MICRO_USD);
      const [ledger] = await client.query<{ lines: string }>(
        "SELECT count(*) AS lines FROM ledger_entries WHERE workspace_id = $1 AND kind = 'usage'",
        [workspace.id],
      );
      assert.equal(Number(ledger.lines), ids.length, "one ledger line per request");
    } finally {
      await store.close();
    }
  });
}
