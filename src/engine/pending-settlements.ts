/**
 * Settlements this instance has handed over and not finished: a finished generation's answer
 * ends before its record is committed and its reservation settled (generation-billing.ts), so for
 * those few milliseconds the counters still hold its worst case. A request of the same key (or
 * workspace) that the limits refuse meanwhile is admitted again once they are done
 * (admit-generation.ts): a client that sends its next request after the last answer sees the
 * headroom that answer's real cost left, as when the answer waited for the settlement.
 */
export class PendingSettlements {
  private readonly byOwner = new Map<string, Set<Promise<void>>>();

  /** Tracks `settling` (never rejects) under the key and the workspace until it ends. */
  track(keyId: string, workspaceId: string, settling: Promise<void>): void {
    const owners = [keyOwner(keyId), workspaceOwner(workspaceId)];
    for (const owner of owners) {
      let pending = this.byOwner.get(owner);
      if (pending === undefined) {
        pending = new Set();
        this.byOwner.set(owner, pending);
      }
      pending.add(settling);
    }
    void settling.then(() => {
      for (const owner of owners) {
        const pending = this.byOwner.get(owner);
        pending?.delete(settling);
        if (pending?.size === 0) this.byOwner.delete(owner);
      }
    });
  }

  /**
   * Waits, at most `timeoutMs`, for the settlements pending for the key or its workspace when
   * called. False when there were none (a refusal then stands as it is).
   */
  async waitFor(keyId: string, workspaceId: string, timeoutMs: number): Promise<boolean> {
    const pending = [
      ...(this.byOwner.get(keyOwner(keyId)) ?? []),
      ...(this.byOwner.get(workspaceOwner(workspaceId)) ?? []),
    ];
    if (pending.length === 0) return false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(pending), deadline]);
    clearTimeout(timer);
    return true;
  }
}

const keyOwner = (keyId: string) => `key:${keyId}`;
const workspaceOwner = (workspaceId: string) => `workspace:${workspaceId}`;
