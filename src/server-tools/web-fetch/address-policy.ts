/**
 * Which destinations an outbound fetch may connect to. An allowlist, not a blocklist: an IPv4
 * address must be ordinary unicast, an IPv6 address global unicast (2000::/3) outside every special
 * range that ipaddr.js knows, so a range nobody listed is refused rather than reached. The one
 * exception is NAT64 (64:ff9b::/96), allowed only when the IPv4 address it embeds is itself allowed.
 *
 * Addresses must be in the strict textual forms `net.isIP` accepts: a resolver answer such as
 * `0177.0.0.1` would be re-resolved by the socket layer (inet_aton reads it as 127.0.0.1), so it is
 * refused instead of interpreted.
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export type AddressVerdict =
  | {
      allowed: true /** Canonical text of the address, the one to connect to. */;
      address: string;
      family: 4 | 6;
    }
  | { allowed: false /** The range that refused it, for logs. */; range: string };

export interface AddressPolicyOptions {
  /** Tests only: 127.0.0.0/8 and ::1 are allowed too. */
  allowLoopback: boolean;
}

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse("64:ff9b::");
const GLOBAL_UNICAST = ipaddr.IPv6.parse("2000::");

export function checkAddress(text: string, options: AddressPolicyOptions): AddressVerdict {
  const family = isIP(text);
  if (family === 0 || text.includes("%")) return { allowed: false, range: "notAnAddress" };
  if (family === 4) return checkIPv4(ipaddr.IPv4.parse(text), options);
  return checkIPv6(ipaddr.IPv6.parse(text), options);
}

function checkIPv4(address: ipaddr.IPv4, options: AddressPolicyOptions): AddressVerdict {
  const range = address.range();
  if (range === "unicast" || (range === "loopback" && options.allowLoopback)) {
    return { allowed: true, address: address.toString(), family: 4 };
  }
  return { allowed: false, range };
}

function checkIPv6(address: ipaddr.IPv6, options: AddressPolicyOptions): AddressVerdict {
  const range = address.range();
  if (range === "loopback" && options.allowLoopback) {
    return { allowed: true, address: address.toString(), family: 6 };
  }
  if (range === "rfc6052" && address.match(NAT64_WELL_KNOWN, 96)) {
    const parts = address.parts;
    const embedded = new ipaddr.IPv4([parts[6] >> 8, parts[6] & 0xff, parts[7] >> 8, parts[7] & 0xff]);
    // Loopback is never reached through NAT64, even in tests.
    const inner = checkIPv4(embedded, { allowLoopback: false });
    return inner.allowed
      ? { allowed: true, address: address.toString(), family: 6 }
      : { allowed: false, range: `nat64:${inner.range}` };
  }
  if (range !== "unicast") return { allowed: false, range };
  if (!address.match(GLOBAL_UNICAST, 3)) {
    // ::a.b.c.d (IPv4-compatible, deprecated) is the case ipaddr.js reports as plain unicast.
    const compatible = address.parts.slice(0, 6).every((part) => part === 0);
    return { allowed: false, range: compatible ? "ipv4Compatible" : "notGlobalUnicast" };
  }
  return { allowed: true, address: address.toString(), family: 6 };
}

/**
 * Host names refused before any DNS lookup: names that mean "this machine" or a private network
 * by definition, and single-label names (resolved through search domains to internal hosts).
 * Returns the rule that refused it, or undefined. `hostname` is a WHATWG URL hostname (lowercase,
 * punycode) that is not an IP literal.
 */
export function checkHostName(hostname: string): string | undefined {
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  for (const suffix of PRIVATE_NAME_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return `name:${suffix}`;
  }
  return name.includes(".") ? undefined : "name:singleLabel";
}

/**
 * Reserved for loopback (RFC 6761), link-local multicast DNS (RFC 6762), home networks (RFC 8375),
 * private use (`internal`, reserved by ICANN in 2024; cloud metadata names live there), Tor
 * (RFC 7686), and the customary `localdomain`.
 */
const PRIVATE_NAME_SUFFIXES = ["localhost", "localdomain", "local", "internal", "home.arpa", "onion"];
