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
  /**
   * How many settlements have finished on this instance. A refusal can cross a settlement: the
   * admission ran in the limit store before it, and the settlement finished before the refusal
   * came back, so nothing is pending any more but the refusal saw the worst case still held.
   * Admission reads this before it asks, and asks again when it changed.
   */
  private finished = 0;

  /** A mark to pass to `waitFor`: settlements finished after it make a refusal worth asking again. */
  mark(): number {
    return this.finished;
  }

  /** Tracks `settling` (never rejects) under the key and the workspace until it ends. */
  track(keyId: string, workspaceId: string, settling: Promise<void>): void {
    add(this.byKey, keyId, settling);
    add(this.byWorkspace, workspaceId, settling);
    void settling.then(() => {
      this.finished++;
      remove(this.byKey, keyId, settling);
      remove(this.byWorkspace, workspaceId, settling);
    });
  }

  /**
   * Waits, at most `timeoutMs`, for the settlements pending for the key or its workspace when
   * called. False when there were none and none finished since `since` (a `mark()` taken before
   * the refused admission was sent): a refusal then stands as it is.
   */
  async waitFor(keyId: string, workspaceId: string, timeoutMs: number, since?: number): Promise<boolean> {
    const pending = [...(this.byKey.get(keyId) ?? []), ...(this.byWorkspace.get(workspaceId) ?? [])];
    if (pending.length === 0) return since !== undefined && this.finished !== since;
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
