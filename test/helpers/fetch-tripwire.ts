/**
 * A network for outbound-fetch tests that never leaves this machine and proves refusals happen
 * before any connection is attempted.
 *
 * - `resolve` answers from a table (never real DNS). An entry is a list of addresses, a function of
 *   the call number (for a rebinding name that answers differently on its second lookup), or an
 *   error code; an unknown name fails like NXDOMAIN.
 * - `openSocket` is the tripwire: it records every connect the fetcher hands to the socket layer.
 *   A connect to a routed address (a public-looking test address, `PUBLIC_TEST_IPV4`:80) goes to a
 *   loopback server instead; a connect to a loopback port listed in `loopbackPorts` goes through
 *   (tests of the loopback escape hatch); one to an `unreachable` address fails as if refused;
 *   anything else is recorded in `violations` and fails without a socket. A test asserts `violations` is empty and `attempts` is what it expects.
 *
 * The fetcher's own policy runs unchanged (escape hatch off): `public.test` is fetchable because its
 * resolved address is public, and only this test's socket layer knows the page lives on loopback.
 */
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HostResolutionError, type HostResolver } from "../../src/server-tools/web-fetch/index.js";
import {
  openSocketWithUndici,
  type SocketOpener,
  type VettedTarget,
} from "../../src/server-tools/web-fetch/pinned-connector.js";

/** Public unicast addresses the tripwire maps to loopback servers; no packet is ever sent to them. */
export const PUBLIC_TEST_IPV4 = "93.184.215.14";
export const PUBLIC_TEST_IPV6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c";

export type DnsEntry = string[] | ((call: number) => string[]) | { error: string };

export interface ConnectAttempt {
  address: string;
  port: number;
  hostname: string;
}

export interface TripwireNetwork {
  resolve: HostResolver;
  openSocket: SocketOpener;
  /** Host names looked up, in order. */
  lookups: string[];
  /** Every connect handed to the socket layer. */
  attempts: ConnectAttempt[];
  /** Connects to an address the test did not route: each one is a failed test. */
  violations: ConnectAttempt[];
}

export interface TripwireOptions {
  dns?: Record<string, DnsEntry>;
  /** `address:port` → loopback port that serves it. */
  routes?: Record<string, number>;
  /** Loopback ports a connect may reach directly (escape-hatch tests). */
  loopbackPorts?: number[];
  /** Addresses whose connects fail as if refused (recorded as attempts, not violations). */
  unreachable?: string[];
}

export function createTripwireNetwork(options: TripwireOptions = {}): TripwireNetwork {
  const calls = new Map<string, number>();
  const network: TripwireNetwork = {
    lookups: [],
    attempts: [],
    violations: [],
    async resolve(hostname) {
      network.lookups.push(hostname);
      const call = (calls.get(hostname) ?? 0) + 1;
      calls.set(hostname, call);
      const entry = options.dns?.[hostname];
      if (entry === undefined) throw new HostResolutionError(hostname, "ENOTFOUND");
      if (typeof entry === "function") return entry(call);
      if (!Array.isArray(entry)) throw new HostResolutionError(hostname, entry.error);
      return entry;
    },
    openSocket(target, timeoutMs, callback) {
      const attempt = { address: target.address, port: target.port, hostname: target.hostname };
      network.attempts.push(attempt);
      const routed = options.routes?.[`${target.address}:${target.port}`];
      if (routed !== undefined) {
        const loopback: VettedTarget = {
          ...target,
          address: "127.0.0.1",
          family: 4,
          port: routed,
          protocol: "http:",
        };
        openSocketWithUndici(loopback, timeoutMs, callback);
        return;
      }
      if (options.unreachable?.includes(target.address)) {
        callback(
          Object.assign(new Error(`connect ECONNREFUSED ${target.address}`), { code: "ECONNREFUSED" }),
          null,
        );
        return;
      }
      if (
        (target.address === "127.0.0.1" || target.address === "::1") &&
        options.loopbackPorts?.includes(target.port)
      ) {
        openSocketWithUndici(target, timeoutMs, callback);
        return;
      }
      network.violations.push(attempt);
      callback(new Error(`tripwire: the fetcher tried to connect to ${target.address}:${target.port}`), null);
    },
  };
  return network;
}

export interface CanaryHit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export type CanaryHandler = (response: ServerResponse, hit: CanaryHit) => void;

/** A loopback HTTP server whose paths are programmed per test; it records every request. */
export interface Canary {
  port: number;
  hits: CanaryHit[];
  /** Answers `path` (path and query) with `handler`; unprogrammed paths get 404. */
  route(path: string, handler: CanaryHandler): void;
  close(): Promise<void>;
}

export async function startCanary(): Promise<Canary> {
  const routes = new Map<string, CanaryHandler>();
  const hits: CanaryHit[] = [];
  const server: Server = createServer((request, response) => {
    const hit = { method: request.method ?? "", url: request.url ?? "", headers: request.headers };
    hits.push(hit);
    request.resume();
    const handler = routes.get(hit.url);
    if (handler) handler(response, hit);
    else response.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    route: (path, handler) => routes.set(path, handler),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
