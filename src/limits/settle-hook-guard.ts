/**
 * The spend guard with a hook after every settlement of a reservation it granted: budget alerts
 * (src/alerts/) look at the key's spend once a cost is in. The hook runs after the counters have
 * the cost, must return at once and never throw; the request's settlement does not wait for what
 * it starts.
 */
import type { AdmissionInput, SpendGuard } from "./spend-guard.js";

export type SettleHook = (input: AdmissionInput, admittedAt: number, costMicroUsd: number) => void;

export function withSettleHook(inner: SpendGuard, hook: SettleHook): SpendGuard {
  return {
    mode: inner.mode,
    async admit(input) {
      const reservation = await inner.admit(input);
      let settled = false;
      return {
        get admittedAt() {
          return reservation.admittedAt;
        },
        get amountMicroUsd() {
          return reservation.amountMicroUsd;
        },
        get outputCap() {
          return reservation.outputCap;
        },
        get outputCapLowered() {
          return reservation.outputCapLowered;
        },
        get recordStored() {
          return reservation.recordStored;
        },
        extend: (amount) => reservation.extend(amount),
        async settle(costMicroUsd) {
          await reservation.settle(costMicroUsd);
          if (settled) return;
          settled = true;
          try {
            hook(input, reservation.admittedAt, costMicroUsd);
          } catch {
            // The hook's own failures are its business; settlement never throws.
          }
        },
      };
    },
    readReserved: (workspaceId, keyId) => inner.readReserved(workspaceId, keyId),
    now: () => inner.now(),
    forgetBalance: (workspaceId) => inner.forgetBalance(workspaceId),
    settleOrphan: (input) => inner.settleOrphan(input),
    close: () => inner.close(),
  };
}
