/**
 * Streams that have upstream data waiting take turns at parsing and encoding it: at most
 * {@link STREAM_TURN_SLOTS} streams at a time, each for up to {@link STREAM_TURN_CHARS} characters
 * while others wait, the stream served least so far first. A stream that has not had a turn yet
 * ends the current one at its next piece: a new answer's first part does not wait for another
 * answer's backlog.
 *
 * Why: Node reads every upstream socket that has data in each turn of the event loop (a network
 * chunk of up to 64 KiB, plus the HTTP client's read-ahead), whether its stream goes on or not.
 * When a hundred streams with a backlog (an upstream that answers faster than the gateway encodes,
 * to clients whose kernel buffers take megabytes each) are worked on in rotation, a chunk waits a
 * whole rotation between its read and its encoding, and a rotation allocates more than V8's young
 * generation holds: nearly every chunk, its decoded text and its frames outlive two scavenges, are
 * promoted, and are freed only by full collections, which V8 starts only once the old generation
 * and the buffers' memory have grown by tens of megabytes. Taking turns, a chunk is encoded soon
 * after it is read and dies young; a waiting stream holds only what its socket had already read.
 *
 * A turn ends when the stream goes to wait for the network and its next chunk is not there in the
 * loop's next turn (an upstream with nothing more ready), when it has used its characters while
 * another stream waits, or when it has not come back for {@link STREAM_TURN_IDLE_MS} (its client's
 * socket is full, or whatever consumes its parts waits for something else). Without another stream
 * waiting a stream never waits, and taking a turn costs a counter.
 */

/** Streams that parse and encode at once while more have data waiting: JavaScript runs on one thread. */
export const STREAM_TURN_SLOTS = 1;
/** Characters of upstream text a stream works through in one turn while another stream waits. */
export const STREAM_TURN_CHARS = 8 * 1024 * 1024;
/** A turn whose stream has not come back for this long goes to the next waiting stream. */
export const STREAM_TURN_IDLE_MS = 20;

export interface StreamTurns {
  /**
   * Before working on `chars` characters: undefined when the stream holds a turn (it goes on at
   * once), else a promise that resolves once it has one.
   */
  take(chars: number): Promise<void> | undefined;
  /**
   * The stream is about to wait for the network: its turn goes to the next stream unless its next
   * chunk arrives in the event loop's next turn (an upstream whose data is already on its way).
   */
  awaitNetwork(): void;
  /** The stream has ended: its turn goes to the next one. */
  release(): void;
}

interface Holder {
  holding: boolean;
  /** Characters in the current turn. */
  used: number;
  /** Characters over the stream's life: who waits least-served goes first. */
  served: number;
  /** Counts takes, so that a release scheduled before a network wait sees whether it came back. */
  takes: number;
  /** Turns it has had: a stream waiting for its first ends the current turn at once. */
  turns: number;
  lastSeen: number;
}

interface Waiter {
  holder: Holder;
  admit(): void;
}

let holders = 0;
const active = new Set<Holder>();
/** Ordered by `served`, least first; equal ones in arrival order. */
const waiting: Waiter[] = [];
let watchdog: NodeJS.Timeout | undefined;

/** The turns of one stream. */
export function createStreamTurns(): StreamTurns {
  const holder: Holder = { holding: false, used: 0, served: 0, takes: 0, turns: 0, lastSeen: 0 };
  return {
    take(chars) {
      holder.takes++;
      holder.served += chars;
      if (holder.holding) {
        if (waiting.length === 0 || (holder.used < STREAM_TURN_CHARS && waiting[0]!.holder.turns > 0)) {
          holder.used += chars;
          holder.lastSeen = performance.now();
          return undefined;
        }
        // Its characters are used and another stream waits, or a stream that has not had a turn
        // yet waits (its first part goes out before the rest of this backlog): it queues again.
        giveUp(holder);
      }
      if (holders < STREAM_TURN_SLOTS && waiting.length === 0) {
        grant(holder);
        holder.used = chars;
        return undefined;
      }
      return new Promise<void>((resolve) => {
        enqueue({
          holder,
          admit: () => {
            holder.used = chars;
            resolve();
          },
        });
        watchdog ??= setInterval(revokeIdle, STREAM_TURN_IDLE_MS / 2).unref();
      });
    },
    awaitNetwork() {
      if (!holder.holding || waiting.length === 0) return;
      const takes = holder.takes;
      // Node reads a socket in the loop's poll phase; the second setImmediate runs after the next one.
      setImmediate(() =>
        setImmediate(() => {
          if (holder.holding && holder.takes === takes) giveUp(holder);
        }),
      );
    },
    release() {
      if (holder.holding) giveUp(holder);
    },
  };
}

function enqueue(waiter: Waiter): void {
  let index = waiting.length;
  while (index > 0 && waiting[index - 1]!.holder.served > waiter.holder.served) index--;
  waiting.splice(index, 0, waiter);
}

function grant(holder: Holder): void {
  holder.holding = true;
  holder.turns++;
  holder.lastSeen = performance.now();
  holders++;
  active.add(holder);
}

function giveUp(holder: Holder): void {
  holder.holding = false;
  holders--;
  active.delete(holder);
  admitWaiting();
}

function admitWaiting(): void {
  while (holders < STREAM_TURN_SLOTS && waiting.length > 0) {
    const next = waiting.shift()!;
    grant(next.holder);
    next.admit();
  }
  if (waiting.length === 0 && watchdog !== undefined) {
    clearInterval(watchdog);
    watchdog = undefined;
  }
}

/** Turns whose streams have not come back go to the next ones. */
function revokeIdle(): void {
  const now = performance.now();
  for (const holder of active) {
    if (now - holder.lastSeen >= STREAM_TURN_IDLE_MS) {
      holder.holding = false;
      holders--;
      active.delete(holder);
    }
  }
  admitWaiting();
}
