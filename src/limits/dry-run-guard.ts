/**
 * Dry runs of admission, for cost quotes (docs/cost-quote.md): the engine's spend guard, except
 * that a request marked as a dry run stops at the moment it would reserve. Admission runs every
 * step before that as for a real request (model, allowlist, lock, server tools, documents, the
 * worst case of every candidate route), so a quote is the reservation the same request would make,
 * from the same code; the guard then throws instead of reserving, before the engine writes any
 * record or calls any upstream. Nothing is reserved, no rate slot is taken.
 */
import type { AdmissionInput, SpendGuard } from "./spend-guard.js";

export interface DryRunGuard {
  /** The guard to give the engine: the wrapped one, for every request not marked. */
  readonly guard: SpendGuard;
  /**
   * Runs `admit` with `requestId` marked: resolves with what admission would have reserved. A
   * refusal before the reservation (unknown model, allowlist, lock, no credit) is thrown as is.
   */
  capture(requestId: string, admit: () => Promise<unknown>): Promise<AdmissionInput>;
}

class DryRunStop extends Error {
  constructor(readonly input: AdmissionInput) {
    super("dry run: admission stopped before its reservation");
  }
}

export function createDryRunGuard(inner: SpendGuard): DryRunGuard {
  const marked = new Set<string>();
  const guard: SpendGuard = {
    mode: inner.mode,
    admit(input) {
      if (marked.has(input.requestId)) return Promise.reject(new DryRunStop(input));
      return inner.admit(input);
    },
    readReserved: (workspaceId, keyId) => inner.readReserved(workspaceId, keyId),
    now: () => inner.now(),
    forgetBalance: (workspaceId) => inner.forgetBalance(workspaceId),
    settleOrphan: (input) => inner.settleOrphan(input),
    close: () => inner.close(),
  };
  return {
    guard,
    async capture(requestId, admit) {
      marked.add(requestId);
      try {
        await admit();
      } catch (error) {
        if (error instanceof DryRunStop && error.input.requestId === requestId) return error.input;
        throw error;
      } finally {
        marked.delete(requestId);
      }
      throw new Error("a dry run was admitted: the engine reserved without its spend guard");
    },
  };
}
