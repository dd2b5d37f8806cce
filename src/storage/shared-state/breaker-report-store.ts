/**
 * The engine's BreakerReportStore over SharedState: one value per instance (`breakers:<id>`, with
 * the time to live it is given) listed in one sorted set, so a reader finds every instance's
 * report in two round trips; entries whose value expired are dropped from the set when read.
 */
import type { BreakerReport, BreakerReportStore } from "../../engine/breaker-reports.js";
import type { SharedState } from "../store.js";

const INDEX = "breaker-reports";
const keyOf = (instanceId: string) => `breakers:${instanceId}`;
/** Far more instances than any deployment runs; bounds one read. */
const MAX_REPORTS = 1_000;

export function createBreakerReportStore(state: SharedState): BreakerReportStore {
  return {
    publish: (report, ttlMs) =>
      state.setIndexedValue(
        [INDEX],
        keyOf(report.instanceId),
        JSON.stringify(report),
        report.reportedAt,
        ttlMs,
      ),
    async list() {
      const entries = await state.listIndexedValues(INDEX, Number.MAX_SAFE_INTEGER, MAX_REPORTS);
      const reports: BreakerReport[] = [];
      for (const { key, value } of entries) {
        if (value === null) {
          await state.deleteIndexedValue([INDEX], key).catch(() => {});
          continue;
        }
        try {
          reports.push(JSON.parse(value) as BreakerReport);
        } catch {
          // A value this version cannot read (another version's): left to expire.
        }
      }
      return reports;
    },
    remove: (instanceId) => state.deleteIndexedValue([INDEX], keyOf(instanceId)),
  };
}
