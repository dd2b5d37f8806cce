/**
 * How a run is interrupted: the client leaving (`cancel`), the gateway stopping it (`stop`, a
 * deadline), and the signals that carry either to the upstream call in flight and to the run's
 * own waits. The run (generation-run.ts) asks it whether it may go on.
 */
import type { GatewayError } from "../errors/gateway-error.js";

export class RunControl {
  /** The client left. */
  cancelled = false;
  /** An upstream call was in flight when the client left: the prompt was likely processed. */
  cancelledDuringCall = false;
  /** An upstream call is in flight. */
  callInFlight = false;
  /** Set by `stop`: the error the run ends with once the upstream call is aborted. */
  stoppedWith?: GatewayError;
  /** Why the run was aborted (`cancel`, `stop`, a consumer that stopped early); undefined until then. */
  abortReason?: unknown;
  /**
   * The upstream call in flight, or the serving stream's: `cancel` and `stop` abort it directly
   * (each attempt has its own signal, so abandoning a failed one cancels its I/O only).
   */
  attemptController?: AbortController;
  /** The run's own signal, for the waits and later rounds that need one (made when first asked for). */
  private runController?: AbortController;

  /** The client left or the gateway stopped the run: no new attempt or round starts. */
  get interrupted(): boolean {
    return this.cancelled || this.stoppedWith !== undefined;
  }

  cancel(): void {
    this.cancelled = true;
    this.cancelledDuringCall = this.callInFlight;
    this.abort(new Error("client disconnected"));
  }

  stop(error: GatewayError): void {
    this.stoppedWith = error;
    this.abort(error);
  }

  /** Aborts the call in flight (or the serving stream) and the run's own signal. */
  abort(reason: unknown): void {
    this.abortReason = reason;
    this.attemptController?.abort(reason);
    this.runController?.abort(reason);
  }

  /** The run's signal, aborted with the run (already aborted when asked for after that). */
  get signal(): AbortSignal {
    if (this.runController === undefined) {
      this.runController = new AbortController();
      if (this.abortReason !== undefined) this.runController.abort(this.abortReason);
    }
    return this.runController.signal;
  }

  /** Waits between passes; a client that leaves or a stop ends the wait at once. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const signal = this.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
