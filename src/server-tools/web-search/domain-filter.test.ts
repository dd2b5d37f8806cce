import assert from "node:assert/strict";
import { test } from "node:test";
import { isUrlPermitted, isUrlUnderDomain, normalizeDomain } from "./domain-filter.js";

test("domain entries are normalised the way Anthropic writes them (no scheme, optional path)", () => {
  const cases: Array<[string, string | null]> = [
    ["Example.COM", "example.com"],
    ["https://example.com/", "example.com"],
    ["*.example.com", "example.com"],
    ["example.com:8443/Blog/", "example.com/Blog"],
    ["docs.example.com/guide?x=1#y", "docs.example.com/guide"],
    ["bücher.de", "xn--bcher-kva.de"],
    ["localhost", null],
    ["user:pw@example.com", null],
    ["exa mple.com", null],
    ["", null],
    ["a".repeat(301), null],
  ];
  for (const [entry, expected] of cases) assert.equal(normalizeDomain(entry), expected, entry);
});

test("a domain covers its subdomains and, with a path, only that path's pages", () => {
  const url = (text: string) => new URL(text);
  assert.equal(isUrlUnderDomain(url("https://example.com/a"), "example.com"), true);
  assert.equal(isUrlUnderDomain(url("https://docs.example.com/a"), "example.com"), true);
  assert.equal(isUrlUnderDomain(url("https://notexample.com/a"), "example.com"), false);
  assert.equal(isUrlUnderDomain(url("https://example.com.evil.net/"), "example.com"), false);
  assert.equal(isUrlUnderDomain(url("https://example.com/blog"), "example.com/blog"), true);
  assert.equal(isUrlUnderDomain(url("https://example.com/blog/post"), "example.com/blog"), true);
  assert.equal(isUrlUnderDomain(url("https://example.com/blogger"), "example.com/blog"), false);
  assert.equal(isUrlPermitted(url("https://a.org/"), [], []), true);
  assert.equal(isUrlPermitted(url("https://a.org/"), ["b.org"], []), false);
  assert.equal(isUrlPermitted(url("https://x.a.org/"), ["a.org"], ["x.a.org"]), false);
});
