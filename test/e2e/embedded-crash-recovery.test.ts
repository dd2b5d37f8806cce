/**
 * Embedded mode answers before a request's usage record reaches PGlite (the usage journal,
 * docs/durability.md). This is the promise end to end: a real gateway process on a data folder
 * answers streamed and non-streamed requests, is killed with SIGKILL right after the last answer,
 * and the next start on the same folder has every record, final, with the balance debited once each.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { stringify } from "yaml";
import { createHttpAdminClient } from "../../src/cli/http-admin-client.js";
import { openStoreWithSqlClient } from "../../src/storage/open-store.js";
import { startGatewayProcess } from "../helpers/gateway-process.js";
import {
  chatBody,
  createLimitsConfig,
  REQUEST_COST_MICRO_USD,
  startPricedUpstream,
} from "../helpers/limits-cluster.js";
import { createTempDir } from "../helpers/storage-modes.js";

const NON_STREAMED = 30;
const STREAMED = 10;

// Both places PGlite can run (GATEWAY_PGLITE_THREAD): in a worker thread the records are written
// by another thread, and SIGKILL ends both at once.
for (const thread of ["main", "worker"] as const) {
  test(`a gateway killed right after answering loses no usage record: the next start has them all, debited once (PGlite thread: ${thread})`, async (t) => {
    const upstream = await startPricedUpstream({ delayMs: 5, pieceDelayMs: 2 });
    t.after(() => upstream.close());
    const folder = await createTempDir("gw-crash-");
    t.after(() => folder.cleanup());
    const configPath = join(folder.path, "gateway.yaml");
    await writeFile(configPath, stringify(createLimitsConfig(upstream.baseUrl)));
    const secret = `test-secret-${randomBytes(8).toString("hex")}`;
    const dataDir = join(folder.path, "data");
    const env = {
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: dataDir,
      INTERNAL_SHARED_SECRET: secret,
      LOG_LEVEL: "info",
      FAKE_UPSTREAM_KEY: "sk-upstream",
      GATEWAY_PGLITE_THREAD: thread,
    };

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
