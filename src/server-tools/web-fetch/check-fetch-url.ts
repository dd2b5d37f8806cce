/**
 * The checks a URL passes before anything is sent: the first URL and every redirect target alike.
 * The URL is parsed once by the WHATWG parser, which is also the parser undici uses to connect, so
 * the host checked here is the host connected to (no parser differential). WHATWG already turns
 * `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, `127。0。0。1` and `%31%32%37.0.0.1` into
 * `127.0.0.1` and strips tabs, newlines and surrounding whitespace, so an IP literal is checked in
 * its canonical form. Host names are checked here by name; their addresses are checked at connect
 * time (pinned-connector.ts).
 */
import { checkAddress, checkHostName } from "./address-policy.js";
import { type FetchFailure, fetchFailure } from "./fetch-failure.js";

/** Longer URLs are refused (`bad_url`); no page a model should read needs more. */
export const MAX_URL_LENGTH = 4096;

export interface UrlPolicy {
  allowHttp: boolean;
  allowedPorts: readonly number[];
  allowLoopback: boolean;
}

export type UrlCheck = { ok: true; url: URL } | FetchFailure;

export function checkFetchUrl(input: string, policy: UrlPolicy, base?: URL): UrlCheck {
  if (input.length > MAX_URL_LENGTH) {
    return fetchFailure("bad_url", `Refused: the URL is longer than ${MAX_URL_LENGTH} characters.`);
  }
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    return fetchFailure("bad_url", "Refused: not a valid absolute URL.");
  }
  const shown = describeUrl(url);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) {
    const allowed = policy.allowHttp ? "http and https" : "https";
    return fetchFailure("bad_scheme", `Refused: only ${allowed} URLs are fetched, not ${url.protocol}.`, {
      url: shown,
    });
  }
  if (url.username !== "" || url.password !== "") {
    return fetchFailure("bad_url", "Refused: URLs with a user name or password are not fetched.", {
      url: shown,
    });
  }
  const port = effectivePort(url);
  if (!policy.allowedPorts.includes(port)) {
    return fetchFailure("blocked_port", `Refused: port ${port} is not allowed for fetches.`, { url: shown });
  }
  const hostname = stripBrackets(url.hostname);
  const refusedBy = checkHostLiteralOrName(hostname, policy.allowLoopback);
  if (refusedBy !== undefined) {
    return fetchFailure("blocked_address", refusedAddressMessage(hostname), {
      url: shown,
      detail: refusedBy,
    });
  }
  url.hash = "";
  return { ok: true, url };
}

/** The rule that refuses a URL hostname (IP literal or name), or undefined. */
function checkHostLiteralOrName(hostname: string, allowLoopback: boolean): string | undefined {
  if (isIpLiteral(hostname)) {
    const verdict = checkAddress(hostname, { allowLoopback });
    return verdict.allowed ? undefined : verdict.range;
  }
  return checkHostName(hostname);
}

export function refusedAddressMessage(hostname: string): string {
  return `Refused: ${hostname} is not a public internet address, so it is not fetched.`;
}

export function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

export function stripBrackets(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/** WHATWG hostnames are IP literals exactly when they are bracketed IPv6 or dotted-decimal IPv4. */
function isIpLiteral(hostname: string): boolean {
  return hostname.includes(":") || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname);
}

/** The URL without credentials or fragment, short enough for a message. */
function describeUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  copy.hash = "";
  return copy.href.length > 300 ? `${copy.href.slice(0, 300)}…` : copy.href;
}
