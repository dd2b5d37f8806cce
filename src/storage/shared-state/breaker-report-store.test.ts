import assert from "node:assert/strict";
import { forEachSharedStateMode } from "../../../test/helpers/storage-modes.js";
import { createBreakerReportStore } from "./breaker-report-store.js";

const report = (instanceId: string, state: "closed" | "open") => ({
  instanceId,
  reportedAt: Date.now(),
  routes: [{ provider: "p", upstreamModel: "m", state }],
});

forEachSharedStateMode(
  "breaker reports: each instance's latest, gone when it expires or is removed",
  async ({ state, openPeer }) => {
    const mine = createBreakerReportStore(state);
    const theirs = createBreakerReportStore(await openPeer());
    await mine.publish(report("inst_a", "closed"), 60_000);
    await mine.publish(report("inst_a", "open"), 60_000);
    await theirs.publish(report("inst_b", "closed"), 300);
    const listed = (await theirs.list()).sort((a, b) => a.instanceId.localeCompare(b.instanceId));
    assert.deepEqual(
      listed.map((entry) => [entry.instanceId, entry.routes[0].state]),
      [
        ["inst_a", "open"],
        ["inst_b", "closed"],
      ],
    );
    // inst_b stops reporting: its report lives one time to live, then leaves the list.
    await new Promise((resolve) => setTimeout(resolve, 450));
    assert.deepEqual(
      (await mine.list()).map((entry) => entry.instanceId),
      ["inst_a"],
    );
    await mine.remove("inst_a");
    assert.deepEqual(await theirs.list(), []);
  },
);
