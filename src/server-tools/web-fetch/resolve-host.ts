/**
 * DNS for outbound fetches: A and AAAA queries through c-ares (`dns.Resolver`), not `getaddrinfo`.
 * c-ares runs on the event loop with its own timeout and can be cancelled, where `getaddrinfo`
 * occupies one of libuv's four threadpool threads (shared with file and crypto work) until the
 * system resolver gives up, however early the fetch was abandoned. It does not read /etc/hosts,
 * which only ever names this machine or private networks, both refused anyway.
 */
import { Resolver } from "node:dns/promises";

/** Resolves a host name to its IP addresses; rejects with a {@link HostResolutionError} when it cannot. */
export type HostResolver = (hostname: string, signal: AbortSignal) => Promise<string[]>;

export class HostResolutionError extends Error {
  constructor(
    readonly hostname: string,
    readonly code: string,
  ) {
    super(`could not resolve ${hostname} (${code})`);
    this.name = "HostResolutionError";
  }
}

/** Per query try; two tries each. The fetch deadline bounds the whole lookup anyway. */
const QUERY_TIMEOUT_MS = 2500;

export interface HostResolverOptions {
  /** DNS servers (`ip` or `ip:port`); default: the system's (/etc/resolv.conf). */
  servers?: string[];
  queryTimeoutMs?: number;
}

export function createHostResolver(options: HostResolverOptions = {}): HostResolver {
  return (hostname, signal) => resolveWith(options, hostname, signal);
}

/** The resolver outbound fetches use unless a test injects one. */
export const resolveHostAddresses: HostResolver = createHostResolver();

async function resolveWith(
  options: HostResolverOptions,
  hostname: string,
  signal: AbortSignal,
): Promise<string[]> {
  signal.throwIfAborted();
  const resolver = new Resolver({ timeout: options.queryTimeoutMs ?? QUERY_TIMEOUT_MS, tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    signal.throwIfAborted();
    const addresses = [
      ...(v4.status === "fulfilled" ? v4.value : []),
      ...(v6.status === "fulfilled" ? v6.value : []),
    ];
    if (addresses.length === 0) {
      const failed = v4.status === "rejected" ? v4.reason : v6.status === "rejected" ? v6.reason : undefined;
      throw new HostResolutionError(hostname, (failed as { code?: string } | undefined)?.code ?? "ENODATA");
    }
    return addresses;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}
