/**
 * A workspace's requests, tokens and cost per UTC day and model over the last `days` whole UTC
 * days (today included), in the admin API's wire form: read by `GET
 * /internal/admin/workspaces/{id}/usage` and by the CLI's `workspace usage` when it opens the
 * database itself.
 */
import { convertMicroUsdToUsd } from "../metering/money.js";
import type { UsageReportRepository } from "./ports.js";

export const USAGE_DAYS = { default: 30, max: 90 } as const;
const DAY_MS = 86_400_000;

export interface WorkspaceUsageJson {
  workspace_id: string;
  days: number;
  since: string;
  until: string;
  data: Array<{
    day: string;
    model: string;
    requests: number;
    tokens_prompt: number;
    tokens_completion: number;
    cost_usd: number;
    cost_micro_usd: string;
  }>;
}

export async function readWorkspaceUsage(
  reports: Pick<UsageReportRepository, "sumDailyUsage">,
  workspaceId: string,
  days: number,
  now = new Date(),
): Promise<WorkspaceUsageJson> {
  const until = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  const since = until - days * DAY_MS;
  const usage = await reports.sumDailyUsage({ workspaceId, since: new Date(since), until: new Date(until) });
  return {
    workspace_id: workspaceId,
    days,
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    data: usage.map((row) => ({
      day: row.day,
      model: row.model,
      requests: row.requests,
      tokens_prompt: row.tokensPrompt,
      tokens_completion: row.tokensCompletion,
      cost_usd: convertMicroUsdToUsd(row.costMicroUsd),
      cost_micro_usd: String(row.costMicroUsd),
    })),
  };
}
