/**
 * Which client connections an instance keeps when there are too many (docs/operations.md,
 * "Connection floods"). Node's own `maxConnections` closes every new connection once the cap is
 * reached, so a few thousand connections that send nothing take the instance off the network
 * until a deadline closes them. Here instead:
 *
 * - A connection is *idle* while it has no request in progress: it has sent no complete request
 *   head yet, or it is a keep-alive connection between requests. It is *busy* from a request's
 *   head until that request's response closes, and for good once it is upgraded (a Responses
 *   WebSocket), so a WebSocket is never taken for idle; the drain closes those sockets itself.
 * - At the cap, the connection idle the longest is closed to make room for the new one; only when
 *   every connection is busy is the new one closed instead. A flood of idle connections therefore
 *   delays nobody: each new caller takes the place of the oldest idle one.
 * - With a per-address cap, a new connection from an address that holds that many first takes the
 *   place of that address's own longest-idle connection, or is closed when all of them are busy.
 * - A connection that has sent no complete request head within `newConnectionTimeoutMs` is closed
 *   (no answer: it asked nothing), well before the header deadline would answer it with 408.
 *
 * Bookkeeping is constant time per event: insertion-ordered sets give the longest-idle connection
 * as their first entry.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface ConnectionRoomLimits {
  /** Open client connections at most. */
  maxConnections: number;
  /** Open connections from one client address at most; 0: no such cap. */
  maxConnectionsPerAddress: number;
  /** A new connection must deliver its first request head within this. */
  newConnectionTimeoutMs: number;
}

/** What the room has done since it last reported (a log line at most every 10 s, when it had to make room). */
export interface ConnectionPressure {
  /** Idle connections closed to make room for new ones. */
  evicted: number;
  /** New connections closed because every connection in their way was busy. */
  refused: number;
  /** Connections closed for sending no request in time. */
  timedOut: number;
}

export interface ConnectionRoom {
  /** Client connections open now (HTTP and upgraded). */
  readonly size: number;
  /** Of those, the idle ones. */
  readonly idle: number;
}

interface Connection {
  readonly socket: Socket;
  readonly address: AddressConnections | undefined;
  /** Requests whose response has not closed yet (pipelining can give more than one). */
  requests: number;
  upgraded: boolean;
  /** The new-connection deadline, until the first request head arrives. */
  firstRequestTimer: NodeJS.Timeout | undefined;
  closed: boolean;
}

interface AddressConnections {
  key: string;
  count: number;
  idle: Set<Connection>;
}

/** How often, at most, pressure is reported (one log line, not one per connection). */
const REPORT_INTERVAL_MS = 10_000;

export function manageConnectionRoom(
  server: Server,
  limits: ConnectionRoomLimits,
  report: (pressure: ConnectionPressure) => void,
): ConnectionRoom {
  const connections = new Map<Socket, Connection>();
  /** Idle connections, the one idle longest first. */
  const idle = new Set<Connection>();
  const addresses = new Map<string, AddressConnections>();
  const perAddress = limits.maxConnectionsPerAddress > 0;
  let pressure: ConnectionPressure = { evicted: 0, refused: 0, timedOut: 0 };
  let lastReportAt = 0;
  const noteReport = () => {
    const now = Date.now();
    if (now - lastReportAt < REPORT_INTERVAL_MS) return;
    lastReportAt = now;
    report(pressure);
    pressure = { evicted: 0, refused: 0, timedOut: 0 };
  };

  const markBusy = (connection: Connection) => {
    idle.delete(connection);
    connection.address?.idle.delete(connection);
  };
  const markIdle = (connection: Connection) => {
    // Re-added at the end: idle the shortest.
    idle.delete(connection);
    idle.add(connection);
    if (connection.address !== undefined) {
      connection.address.idle.delete(connection);
      connection.address.idle.add(connection);
    }
  };
  /** Takes the connection out of the books (at once: its 'close' comes a tick later). */
  const forget = (connection: Connection) => {
    if (connection.closed) return;
    connection.closed = true;
    clearTimeout(connection.firstRequestTimer);
    connections.delete(connection.socket);
    markBusy(connection);
    const address = connection.address;
    if (address !== undefined && --address.count === 0) addresses.delete(address.key);
  };
  const close = (connection: Connection) => {
    forget(connection);
    connection.socket.destroy();
  };
  /** Closes the first (longest idle) of `candidates`; false when there is none. */
  const evictFirst = (candidates: Set<Connection>): boolean => {
    const first = candidates.values().next();
    if (first.done) return false;
    close(first.value);
    pressure.evicted++;
    return true;
  };

  function onFirstRequestTimeout(this: Connection): void {
    this.firstRequestTimer = undefined;
    if (this.requests > 0 || this.upgraded || this.closed) return;
    close(this);
    // Counted, not reported by itself: clients that open a connection ahead and never use it
    // are ordinary.
    pressure.timedOut++;
  }

  // Registered after the HTTP server's own connection listener, which has set the socket up.
  server.on("connection", (socket: Socket) => {
    let address: AddressConnections | undefined;
    if (perAddress) {
      const key = socket.remoteAddress ?? "";
      address = addresses.get(key);
      if (address !== undefined && address.count >= limits.maxConnectionsPerAddress) {
        if (!evictFirst(address.idle)) {
          socket.destroy();
          pressure.refused++;
          noteReport();
          return;
        }
        // Evicting the address's last connection dropped its entry.
        address = addresses.get(key);
      }
    }
    if (connections.size >= limits.maxConnections && !evictFirst(idle)) {
      socket.destroy();
      pressure.refused++;
      noteReport();
      return;
    }
    if (perAddress && address === undefined) {
      const key = socket.remoteAddress ?? "";
      address = { key, count: 0, idle: new Set() };
      addresses.set(key, address);
    }
    const connection: Connection = {
      socket,
      address,
      requests: 0,
      upgraded: false,
      firstRequestTimer: undefined,
      closed: false,
    };
    if (address !== undefined) address.count++;
    connections.set(socket, connection);
    markIdle(connection);
    connection.firstRequestTimer = setTimeout(
      onFirstRequestTimeout.bind(connection),
      limits.newConnectionTimeoutMs,
    );
    connection.firstRequestTimer.unref();
    socket.once("close", () => forget(connection));
    if (pressure.evicted > 0) noteReport();
  });

  const onResponseClose = (connection: Connection) => {
    connection.requests--;
    if (connection.requests === 0 && !connection.upgraded && !connection.closed) markIdle(connection);
  };
  server.on("request", (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const connection = connections.get(incoming.socket as Socket);
    if (connection === undefined || connection.closed) return;
    clearTimeout(connection.firstRequestTimer);
    connection.firstRequestTimer = undefined;
    connection.requests++;
    markBusy(connection);
    outgoing.once("close", () => onResponseClose(connection));
  });
  server.on("upgrade", (incoming: IncomingMessage) => {
    const connection = connections.get(incoming.socket as Socket);
    if (connection === undefined || connection.closed) return;
    clearTimeout(connection.firstRequestTimer);
    connection.firstRequestTimer = undefined;
    connection.upgraded = true;
    markBusy(connection);
  });

  return {
    get size() {
      return connections.size;
    },
    get idle() {
      return idle.size;
    },
  };
}
