/**
 * Settlements this instance has handed over and not finished: a finished generation's answer
 * ends before its record is committed and its reservation settled (generation-billing.ts), so for
 * those few milliseconds the counters still hold its worst case. A request of the same key (or
 * workspace) that the limits refuse meanwhile is admitted again once they are done
 * (admit-generation.ts): a client that sends its next request after the last answer sees the
 * headroom that answer's real cost left, as when the answer waited for the settlement.
 *
 * Every generation passes through `track`: keys and workspaces are kept in maps of their own, so
 * a call joins no owner strings and builds no list of owners.
 */
export class PendingSettlements {
  private readonly byKey = new Map<string, Set<Promise<void>>>();
  private readonly byWorkspace = new Map<string, Set<Promise<void>>>();

  /** Tracks `settling` (never rejects) under the key and the workspace until it ends. */
  track(keyId: string, workspaceId: string, settling: Promise<void>): void {
    add(this.byKey, keyId, settling);
    add(this.byWorkspace, workspaceId, settling);
    void settling.then(() => {
      remove(this.byKey, keyId, settling);
      remove(this.byWorkspace, workspaceId, settling);
    });
  }

  /**
   * Waits, at most `timeoutMs`, for the settlements pending for the key or its workspace when
   * called. False when there were none (a refusal then stands as it is).
   */
  async waitFor(keyId: string, workspaceId: string, timeoutMs: number): Promise<boolean> {
    const pending = [...(this.byKey.get(keyId) ?? []), ...(this.byWorkspace.get(workspaceId) ?? [])];
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

function add(owners: Map<string, Set<Promise<void>>>, owner: string, settling: Promise<void>): void {
  let pending = owners.get(owner);
  if (pending === undefined) {
    pending = new Set();
    owners.set(owner, pending);
  }
  pending.add(settling);
}

function remove(owners: Map<string, Set<Promise<void>>>, owner: string, settling: Promise<void>): void {
  const pending = owners.get(owner);
  if (pending === undefined) return;
  pending.delete(settling);
  if (pending.size === 0) owners.delete(owner);
}
