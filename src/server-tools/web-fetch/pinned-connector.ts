/**
 * The undici connector of outbound fetches: the one place a socket is opened. For every new
 * connection it resolves the host once, checks every address the resolver returned (one refused
 * address refuses the host: a name that answers [public, private] is not fetched), and hands the
 * checked address itself to the socket layer, so nothing resolves the name a second time between the
 * check and the connect (DNS rebinding). The TLS server name and the Host header stay the URL's host
 * name. IP literals are checked here too, although the URL check has already refused bad ones.
 */
import { isIP, type Socket } from "node:net";
import { buildConnector } from "undici";
import { checkAddress, checkHostName } from "./address-policy.js";
import type { UrlPolicy } from "./check-fetch-url.js";
import { HostResolutionError, type HostResolver } from "./resolve-host.js";

/** A destination that passed every check. */
export interface VettedTarget {
  /** The checked address, in canonical text: the socket connects to exactly this. */
  address: string;
  family: 4 | 6;
  port: number;
  protocol: "http:" | "https:";
  /** The URL's host name: the TLS server name (SNI and certificate check). */
  hostname: string;
}

export type SocketCallback = (error: Error | null, socket: Socket | null) => void;

/**
 * Opens a socket (TLS for https) to a vetted target. The default is undici's own connector; tests
 * inject one that records every attempt (a tripwire) and maps a public test address to a loopback
 * server.
 */
export type SocketOpener = (target: VettedTarget, timeoutMs: number, callback: SocketCallback) => void;

/** The destination is not on the public internet; `detail` names the rule, for logs only. */
export class BlockedDestinationError extends Error {
  constructor(
    readonly hostname: string,
    readonly detail: string,
  ) {
    super(`refused destination ${hostname} (${detail})`);
    this.name = "BlockedDestinationError";
  }
}

/** Addresses tried per connection when one does not answer (e.g. IPv6 without a route). */
const MAX_CONNECT_ATTEMPTS = 3;

export interface PinnedConnectorOptions {
  policy: UrlPolicy;
  resolve: HostResolver;
  openSocket: SocketOpener;
  /** Aborts DNS and further connect attempts (the fetch's deadline and caller). */
  signal: AbortSignal;
  /** Per-attempt connect timeout; the fetch deadline still bounds the total. */
  connectTimeoutMs: number;
}

type UndiciConnectOptions = Parameters<buildConnector.connector>[0];

export function createPinnedConnector(options: PinnedConnectorOptions): buildConnector.connector {
  return (connectOptions, callback) => {
    vetAndConnect(connectOptions, options).then(
      (socket) => callback(null, socket),
      (error: Error) => callback(error, null),
    );
  };
}

async function vetAndConnect(
  connect: UndiciConnectOptions,
  options: PinnedConnectorOptions,
): Promise<Socket> {
  const protocol = connect.protocol;
  if (protocol !== "https:" && !(protocol === "http:" && options.policy.allowHttp)) {
    throw new BlockedDestinationError(connect.hostname, `scheme:${protocol}`);
  }
  const port = connect.port === "" ? (protocol === "https:" ? 443 : 80) : Number(connect.port);
  if (!options.policy.allowedPorts.includes(port)) {
    throw new BlockedDestinationError(connect.hostname, `port:${port}`);
  }
  const candidates = await vetHost(connect.hostname, options);
  let lastError: Error | undefined;
  for (const candidate of candidates.slice(0, MAX_CONNECT_ATTEMPTS)) {
    options.signal.throwIfAborted();
    const target: VettedTarget = { port, protocol, hostname: connect.hostname, ...candidate };
    try {
      return await openSocket(options.openSocket, target, options.connectTimeoutMs);
    } catch (error) {
      lastError = error as Error;
    }
  }
  throw lastError ?? new Error("no address to connect to");
}

/** The checked addresses of a host, IPv4 first; throws when any answer is refused. */
async function vetHost(
  hostname: string,
  options: PinnedConnectorOptions,
): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const allowLoopback = options.policy.allowLoopback;
  if (isIP(hostname) !== 0) {
    const verdict = checkAddress(hostname, { allowLoopback });
    if (!verdict.allowed) throw new BlockedDestinationError(hostname, verdict.range);
    return [verdict];
  }
  const refusedName = checkHostName(hostname);
  if (refusedName !== undefined) throw new BlockedDestinationError(hostname, refusedName);
  let answers: string[];
  try {
    answers = await options.resolve(hostname, options.signal);
  } catch (error) {
    options.signal.throwIfAborted();
    if (error instanceof HostResolutionError) throw error;
    throw new HostResolutionError(hostname, (error as { code?: string }).code ?? "ERESOLVE");
  }
  if (answers.length === 0) throw new HostResolutionError(hostname, "ENODATA");
  const vetted = new Map<string, { address: string; family: 4 | 6 }>();
  for (const answer of answers) {
    const verdict = checkAddress(answer, { allowLoopback });
    if (!verdict.allowed) throw new BlockedDestinationError(hostname, `dns:${verdict.range}`);
    vetted.set(verdict.address, { address: verdict.address, family: verdict.family });
  }
  return [...vetted.values()].sort((a, b) => a.family - b.family);
}

function openSocket(opener: SocketOpener, target: VettedTarget, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    opener(target, timeoutMs, (error, socket) => {
      if (error !== null || socket === null) reject(error ?? new Error("connect failed"));
      else resolve(socket);
    });
  });
}

/**
 * Name lookups are impossible on the default path: the connector is always handed an IP address,
 * and should that ever change this lookup fails the connect instead of consulting DNS.
 */
function refuseLookup(hostname: string, _options: unknown, callback: (error: Error) => void): void {
  callback(new BlockedDestinationError(hostname, "unvettedLookup"));
}

/** undici's connector pointed at the vetted address, with the URL's host name as TLS server name. */
export const openSocketWithUndici: SocketOpener = (target, timeoutMs, callback) => {
  const connector = buildConnector({
    timeout: timeoutMs,
    lookup: refuseLookup as never,
    maxCachedSessions: 0,
  });
  connector(
    {
      hostname: target.address,
      host: target.hostname,
      protocol: target.protocol,
      port: String(target.port),
      servername: isIP(target.hostname) === 0 ? target.hostname : undefined,
    },
    callback as buildConnector.Callback,
  );
};
