import assert from "node:assert/strict";
import { test } from "node:test";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { SpendGuard } from "../limits/spend-guard.js";
import type { Logger } from "../logging/logger.js";
import type { GenerationStart } from "./generation-record.js";
import { settleInterrupted } from "./interrupted-sweep.js";
import type { EngineStore } from "./ports.js";

function start(id: string): GenerationStart {
  return {
    id,
    workspaceId: "ws",
    apiKeyId: "key",
    model: "gone/model",
    ingressFormat: "chat_completions",
    source: "api",
    stream: false,
    estimatedInputTokens: 10,
  };
}

test("a record that cannot be settled leaves the others settled, and the sweep ends", async () => {
  const open = new Map(["bad", "good-1", "good-2"].map((id) => [id, start(id)]));
  const orphans: string[] = [];
  const warnings: string[] = [];
  const store = {
    generations: {
      async listInProgress(_before: Date, limit: number) {
        return [...open.values()].slice(0, limit);
      },
      async finish(id: string) {
        if (id === "bad") throw new Error("row refused");
        open.delete(id);
      },
    },
  } as unknown as EngineStore;
  const spendGuard = {
    async settleOrphan(orphan: { requestId: string }) {
      orphans.push(orphan.requestId);
    },
  } as unknown as SpendGuard;
  const logger = {
    warn(_fields: unknown, message: string) {
      warnings.push(message);
    },
  } as unknown as Logger;
  const config = { modelsBySlug: new Map(), maxRequestMs: 1000 } as unknown as GatewayConfig;

  const settled = await settleInterrupted({ config, store, spendGuard, logger }, new Date());
  assert.equal(settled, 2);
  assert.deepEqual([...open.keys()], ["bad"], "the failing record stays open for the next sweep");
  assert.deepEqual(orphans, ["good-1", "good-2"], "their reservations released");
  assert.ok(warnings.includes("interrupted request not settled"));
});
