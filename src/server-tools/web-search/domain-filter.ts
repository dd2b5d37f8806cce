/**
 * Domain filters as Anthropic's web_search tool defines them: a domain is written without a scheme
 * (`example.com`, optionally with a path: `example.com/blog`), and it covers its subdomains
 * (`docs.example.com`). Backends that cannot filter by domain get the filter applied to their
 * results here; backends that can still have their answers checked the same way.
 */

/** Longest accepted domain entry; a hostname is at most 253 characters. */
const MAX_DOMAIN_CHARS = 300;
const HOST_PATTERN = /^(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/**
 * The canonical form of a domain entry, or null when it is not one: lower case, scheme, `*.`, port,
 * query and trailing slash removed, internationalised names in punycode (`bücher.de` →
 * `xn--bcher-kva.de`).
 */
export function normalizeDomain(entry: string): string | null {
  let text = entry.trim();
  if (text === "" || text.length > MAX_DOMAIN_CHARS) return null;
  text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/^\*\./, "");
  let parsed: URL;
  try {
    parsed = new URL(`http://${text}`);
  } catch {
    return null;
  }
  if (parsed.username !== "" || parsed.password !== "") return null;
  const host = parsed.hostname.replace(/\.$/, "");
  if (!HOST_PATTERN.test(host) || !host.includes(".")) return null;
  const path = parsed.pathname.replace(/\/+$/, "");
  return path === "" ? host : `${host}${path}`;
}

/** True when `url` lies under the normalised `domain` (same host or a subdomain; path prefix by segment). */
export function isUrlUnderDomain(url: URL, domain: string): boolean {
  const slash = domain.indexOf("/");
  const host = slash === -1 ? domain : domain.slice(0, slash);
  const hostname = url.hostname.replace(/\.$/, "");
  if (hostname !== host && !hostname.endsWith(`.${host}`)) return false;
  if (slash === -1) return true;
  const path = domain.slice(slash);
  return url.pathname === path || url.pathname.startsWith(`${path}/`);
}

/** Whether a result URL passes both lists: under some allowed domain (when any) and under no blocked one. */
export function isUrlPermitted(
  url: URL,
  allowedDomains: readonly string[],
  blockedDomains: readonly string[],
): boolean {
  if (allowedDomains.length > 0 && !allowedDomains.some((domain) => isUrlUnderDomain(url, domain))) {
    return false;
  }
  return !blockedDomains.some((domain) => isUrlUnderDomain(url, domain));
}

/** The host part of a normalised domain (`example.com/blog` → `example.com`). */
export function getDomainHost(domain: string): string {
  const slash = domain.indexOf("/");
  return slash === -1 ? domain : domain.slice(0, slash);
}
