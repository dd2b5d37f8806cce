/**
 * Credit changes are announced here (by the admin service, on whichever instance or CLI made them),
 * and every gateway's spend guard drops its balance counter, so the next request re-seeds it from
 * Postgres. The counter also expires within a minute, which bounds a lost message.
 */
export const BALANCE_CHANGED_CHANNEL = "gateway:balance-changed";

export function encodeBalanceChange(workspaceId: string): string {
  return JSON.stringify({ workspaceId });
}

/** undefined when the message is not one of ours. */
export function decodeBalanceChange(message: string): string | undefined {
  try {
    const { workspaceId } = JSON.parse(message) as { workspaceId?: unknown };
    return typeof workspaceId === "string" ? workspaceId : undefined;
  } catch {
    return undefined;
  }
}
