/**
 * The end-of-test money check of the billing tests, through the public `GET /api/v1/key`: what the
 * key's records cost (its total spend, summed from the database) equals what its workspace's
 * balance lost (the ledger debits it), equals what the test saw billed, and nothing is still
 * reserved in the limit counters.
 */
import assert from "node:assert/strict";

interface KeyInfo {
  data: {
    limits: { total: { spent_micro_usd: string; reserved_micro_usd: string | null } };
    workspace: { balance_micro_usd: string; reserved_micro_usd: string | null };
  };
}

export async function assertLedgerMatches(options: {
  gatewayUrl: string;
  apiKey: string;
  /** The workspace's credit before the test; the key must be its only one. */
  initialBalanceMicroUsd: number;
  /** Σ cost of the records the test read. */
  billedMicroUsd: number;
}): Promise<void> {
  const response = await fetch(`${options.gatewayUrl}/api/v1/key`, {
    headers: { authorization: `Bearer ${options.apiKey}` },
  });
  const info = (await response.json()) as KeyInfo;
  assert.equal(response.status, 200, JSON.stringify(info));
  const spent = Number(info.data.limits.total.spent_micro_usd);
  const balance = Number(info.data.workspace.balance_micro_usd);
  assert.equal(spent, options.billedMicroUsd, "the records' costs are what the test saw billed");
  assert.equal(
    balance,
    options.initialBalanceMicroUsd - spent,
    "the balance lost exactly the records' costs",
  );
  assert.equal(info.data.workspace.reserved_micro_usd, "0", "nothing reserved for the workspace");
  assert.equal(info.data.limits.total.reserved_micro_usd, "0", "nothing reserved for the key");
}
