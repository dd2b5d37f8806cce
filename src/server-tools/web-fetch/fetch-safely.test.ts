/**
 * The outbound fetcher against the SSRF catalogue. Every refusal is proven to happen before any
 * connection is attempted: the tripwire network (test/helpers/fetch-tripwire.ts) records each
 * connect handed to the socket layer and fails any it was not told to route, and the loopback
 * canary records every request that reached it. `public.test` resolves to a public address that
 * the tripwire routes to the canary, so the fetcher's policy runs with the escape hatch off.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import {
  type Canary,
  createTripwireNetwork,
  PUBLIC_TEST_IPV4,
  PUBLIC_TEST_IPV6,
  startCanary,
  type TripwireNetwork,
  type TripwireOptions,
} from "../../../test/helpers/fetch-tripwire.js";
import { defaultWebFetchSettings } from "../../config/server-tools/web-fetch-config.js";
import {
  FETCH_USER_AGENT,
  fetchSafely,
  type SafeFetchResult,
  type SafeFetchSettings,
} from "./fetch-safely.js";
import { createPinnedConnector } from "./pinned-connector.js";

let canary: Canary;
let otherCanary: Canary;

before(async () => {
  canary = await startCanary();
  otherCanary = await startCanary();
});

after(async () => {
  await canary.close();
  await otherCanary.close();
});

const OTHER_PUBLIC_IPV4 = "93.184.215.15";

function settings(overrides: Partial<SafeFetchSettings> = {}): SafeFetchSettings {
  return { ...defaultWebFetchSettings(), timeoutMs: 5000, ...overrides };
}

/** public.test and other.test are public names served by the two canaries; the rest is per test. */
function network(options: TripwireOptions = {}): TripwireNetwork {
  return createTripwireNetwork({
    ...options,
    dns: { "public.test": [PUBLIC_TEST_IPV4], "other.test": [OTHER_PUBLIC_IPV4], ...options.dns },
    routes: {
      [`${PUBLIC_TEST_IPV4}:80`]: canary.port,
      [`${OTHER_PUBLIC_IPV4}:80`]: otherCanary.port,
      ...options.routes,
    },
  });
}

function hitsOf(target: Canary): number {
  return target.hits.length;
}

function assertRefused(result: SafeFetchResult, reason: string, label: string): void {
  assert.equal(result.ok, false, `${label}: expected a refusal`);
  if (result.ok) return;
  assert.equal(result.reason, reason, `${label}: ${result.message}`);
  assert.match(result.message, /^(Refused|Failed): /, label);
}

/** Each host resolves (through `net`) to something refused: no connect is ever attempted. */
async function expectHostsRefused(hosts: string[], net: TripwireNetwork): Promise<void> {
  for (const host of hosts) {
    const result = await fetchSafely(`http://${host}/`, { settings: settings(), network: net });
    assertRefused(result, "blocked_address", host);
  }
  assert.deepEqual(net.lookups, hosts);
  assert.equal(net.attempts.length, 0);
}

function ok(result: SafeFetchResult): Extract<SafeFetchResult, { ok: true }> {
  if (!result.ok) assert.fail(`expected a page, got ${result.reason}: ${result.message}`);
  return result;
}

/** Literal-address targets of the catalogue: IPv4 spellings, IPv6 forms, metadata services, reserved ranges. */
const LITERAL_TARGETS = [
  "http://127.0.0.1/",
  "http://127.1/",
  "http://0/",
  "http://0.0.0.0/",
  "http://0.1.2.3/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://017700000001/",
  "http://0177.0.0.1/",
  "http://0x7f.1/",
  "http://[::1]/",
  "http://[::]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:7f00:1]/",
  "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
  "http://[::ffff:169.254.169.254]/",
  "http://[::127.0.0.1]/",
  "http://[::a9fe:a9fe]/",
  "http://[64:ff9b::a9fe:a9fe]/",
  "http://[64:ff9b::10.0.0.1]/",
  "http://[64:ff9b:1::a9fe:a9fe]/",
  "http://[2002:7f00:1::]/",
  "http://[2002:a9fe:a9fe::]/",
  "http://[2001::1]/",
  "http://169.254.169.254/latest/meta-data/",
  "http://2852039166/latest/meta-data/",
  "http://0xa9fea9fe/",
  "http://0251.0376.0251.0376/",
  "http://169.254.43518/",
  "http://169.254.170.2/v2/credentials",
  "http://100.100.100.200/latest/meta-data/",
  "http://[fd00:ec2::254]/latest/meta-data/",
  "http://[fd00:ec2:0:0:0:0:0:254]/",
  "http://[FD00:EC2::254]/",
  "http://10.0.0.1/",
  "http://10.255.255.255/",
  "http://172.16.0.1/",
  "http://172.31.255.254/",
  "http://192.168.0.1/",
  "http://100.64.0.1/",
  "http://198.18.0.1/",
  "http://198.19.255.254/",
  "http://224.0.0.1/",
  "http://239.255.255.250/",
  "http://240.0.0.1/",
  "http://255.255.255.255/",
  "http://[fc00::1]/",
  "http://[fe80::1]/",
  "http://[fec0::1]/",
  "http://[ff02::1]/",
  "https://169.254.169.254/",
  "https://[::1]/",
];

/** Names refused by name, before any lookup. */
const NAME_TARGETS = [
  "http://localhost/",
  "http://LOCALHOST./",
  "http://x.localhost/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://printer.local/",
  "http://router.home.arpa/",
  "http://redis/",
];

const LOOPBACK_LITERALS = new Set([
  "http://127.0.0.1/",
  "http://127.1/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://017700000001/",
  "http://0177.0.0.1/",
  "http://0x7f.1/",
  "http://[::1]/",
  "https://[::1]/",
]);

describe("SSRF with literal addresses and local names", () => {
  test("every target is refused before any lookup or connect", async () => {
    const net = network();
    const hits = hitsOf(canary);
    for (const url of [...LITERAL_TARGETS, ...NAME_TARGETS]) {
      const result = await fetchSafely(url, { settings: settings(), network: net });
      assertRefused(result, "blocked_address", url);
      assert.ok(!result.ok && /not a public internet address/.test(result.message), url);
    }
    assert.deepEqual(net.attempts, []);
    assert.deepEqual(net.lookups, []);
    assert.equal(hitsOf(canary), hits);
  });

  test("the refusal message is the same for every refused range (no hint of what is there)", async () => {
    const net = network();
    const messages = new Set<string>();
    for (const host of ["10.0.0.1", "169.254.169.254", "127.0.0.1", "192.168.0.1"]) {
      const result = await fetchSafely(`http://${host}/`, { settings: settings(), network: net });
      if (!result.ok) messages.add(result.message.replace(host, "<host>"));
    }
    assert.deepEqual(
      [...messages],
      ["Refused: <host> is not a public internet address, so it is not fetched."],
    );
  });

  test("with the loopback escape hatch on, everything but loopback stays refused", async () => {
    const net = network();
    for (const url of [...LITERAL_TARGETS, ...NAME_TARGETS]) {
      if (LOOPBACK_LITERALS.has(url)) continue;
      const result = await fetchSafely(url, {
        settings: settings({ unsafeAllowLoopbackForTests: true }),
        network: net,
      });
      assertRefused(result, "blocked_address", url);
    }
    assert.deepEqual(net.attempts, []);
  });

  test("a loopback page is refused without the escape hatch and fetched with it", async () => {
    canary.route("/hatch", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("hatch"),
    );
    const url = `http://127.0.0.1:${canary.port}/hatch`;
    const allowedPorts = [80, 443, canary.port];
    // The tripwire lets a connect to the canary's port through, so only the policy stands between.
    const net = network({ loopbackPorts: [canary.port] });
    const hits = hitsOf(canary);
    const refused = await fetchSafely(url, { settings: settings({ allowedPorts }), network: net });
    assertRefused(refused, "blocked_address", url);
    assert.equal(hitsOf(canary), hits);
    assert.deepEqual(net.attempts, []);

    const fetched = ok(
      await fetchSafely(url, {
        settings: settings({ allowedPorts, unsafeAllowLoopbackForTests: true }),
        network: net,
      }),
    );
    assert.equal(fetched.body.toString(), "hatch");
    // No injected network at all: the production DNS and socket path, pinned to the literal.
    const production = ok(
      await fetchSafely(url, { settings: settings({ allowedPorts, unsafeAllowLoopbackForTests: true }) }),
    );
    assert.equal(production.body.toString(), "hatch");
  });

  test("the connector refuses a bad destination on its own, even if a URL check were skipped", async () => {
    const net = network({ dns: { "private.test": ["10.1.2.3"] } });
    const connect = createPinnedConnector({
      policy: { allowHttp: true, allowedPorts: [80, 443], allowLoopback: false },
      resolve: net.resolve,
      openSocket: net.openSocket,
      signal: new AbortController().signal,
      connectTimeoutMs: 1000,
    });
    for (const hostname of [
      "127.0.0.1",
      "169.254.169.254",
      "::ffff:7f00:1",
      "fd00:ec2::254",
      "localhost",
      "private.test",
    ]) {
      const error = await new Promise<Error | null>((resolve) =>
        connect({ hostname, host: hostname, protocol: "http:", port: "" }, (...args) => resolve(args[0])),
      );
      assert.equal(error?.name, "BlockedDestinationError", hostname);
    }
    for (const [protocol, port] of [
      ["http:", "6379"],
      ["gopher:", ""],
    ]) {
      const error = await new Promise<Error | null>((resolve) =>
        connect({ hostname: "public.test", host: "public.test", protocol, port }, (...args) =>
          resolve(args[0]),
        ),
      );
      assert.equal(error?.name, "BlockedDestinationError", `${protocol}${port}`);
    }
    assert.deepEqual(net.attempts, []);
  });
});

describe("SSRF through DNS", () => {
  test("a name resolving to a private, metadata or mapped address is refused before connecting", async () => {
    const net = network({
      dns: {
        "private.test": ["10.0.0.5"],
        "meta.test": ["169.254.169.254"],
        "mapped.test": ["::ffff:127.0.0.1"],
        "ula.test": ["fd00:ec2::254"],
        "loop.test": ["127.0.0.1"],
        "odd.test": ["0177.0.0.1"],
      },
    });
    await expectHostsRefused(
      ["private.test", "meta.test", "mapped.test", "ula.test", "loop.test", "odd.test"],
      net,
    );
  });

  test("a name answering [public, private] is refused: every address is checked", async () => {
    const net = network({
      dns: {
        "mixed.test": [PUBLIC_TEST_IPV4, "10.0.0.5"],
        "mixed6.test": [PUBLIC_TEST_IPV6, "fe80::1"],
      },
    });
    await expectHostsRefused(["mixed.test", "mixed6.test"], net);
  });

  test("a rebinding name: the socket goes to the checked address, and a new connection is checked again", async () => {
    canary.route("/rebind", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("first"),
    );
    canary.route("/rebind-hop", (response) => response.writeHead(302, { location: "/rebind-next" }).end());
    const answers = (call: number) => (call === 1 ? [PUBLIC_TEST_IPV4] : ["127.0.0.1"]);
    const net = network({ dns: { "rebind.test": answers, "rebind2.test": answers }, loopbackPorts: [80] });

    const fetched = ok(
      await fetchSafely("http://rebind.test/rebind", { settings: settings(), network: net }),
    );
    assert.equal(fetched.body.toString(), "first");
    assert.deepEqual(net.lookups, ["rebind.test"]);
    assert.deepEqual(net.attempts, [{ address: PUBLIC_TEST_IPV4, port: 80, hostname: "rebind.test" }]);

    // The redirect opens a new connection; its lookup now answers loopback and is refused.
    const redirected = await fetchSafely("http://rebind2.test/rebind-hop", {
      settings: settings(),
      network: net,
    });
    assertRefused(redirected, "blocked_address", "rebinding redirect");
    assert.deepEqual(net.lookups, ["rebind.test", "rebind2.test", "rebind2.test"]);
    assert.deepEqual(
      net.attempts.map((attempt) => attempt.address),
      [PUBLIC_TEST_IPV4, PUBLIC_TEST_IPV4],
    );
    assert.deepEqual(net.violations, []);
  });

  test("a failed resolution fails closed", async () => {
    const hanging = network();
    hanging.resolve = (_name, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    const started = performance.now();
    assertRefused(
      await fetchSafely("http://slow-dns.test/", {
        settings: settings({ timeoutMs: 300 }),
        network: hanging,
      }),
      "timeout",
      "hanging DNS",
    );
    assert.ok(performance.now() - started < 3000);

    const net = network({ dns: { "servfail.test": { error: "ESERVFAIL" }, "empty.test": [] } });
    for (const host of ["nxdomain.test", "servfail.test", "empty.test"]) {
      assertRefused(
        await fetchSafely(`http://${host}/`, { settings: settings(), network: net }),
        "dns_failure",
        host,
      );
    }
    assert.deepEqual([...hanging.attempts, ...net.attempts], []);
  });

  test("IPv4 is tried first, and the next checked address when one does not answer", async () => {
    canary.route("/dual", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("dual"),
    );
    const unroutedV4 = "93.184.215.99";
    const net = network({
      dns: { "dual.test": [PUBLIC_TEST_IPV6, unroutedV4] },
      routes: { [`${PUBLIC_TEST_IPV6}:80`]: canary.port },
      unreachable: [unroutedV4],
    });
    // The IPv4 address refuses the connection; the IPv6 one answers.
    const fetched = ok(await fetchSafely("http://dual.test/dual", { settings: settings(), network: net }));
    assert.equal(fetched.body.toString(), "dual");
    assert.deepEqual(
      net.attempts.map((attempt) => attempt.address),
      [unroutedV4, PUBLIC_TEST_IPV6],
    );
    assert.deepEqual(net.violations, []);
  });
});

describe("SSRF through redirects", () => {
  const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

  test("every redirect target is checked again, for every redirect status", async () => {
    const net = network({ dns: { "private.test": ["10.0.0.7"] }, loopbackPorts: [canary.port] });
    const targets: Array<[string, string]> = [
      [`http://127.0.0.1:${canary.port}/secret`, "blocked_address"],
      ["http://169.254.169.254/latest/meta-data/", "blocked_address"],
      ["http://[fd00:ec2::254]/latest/meta-data/", "blocked_address"],
      ["//10.0.0.1/relative-to-scheme", "blocked_address"],
      ["http://private.test/", "blocked_address"],
      ["http://localhost/", "blocked_address"],
      ["file:///etc/passwd", "bad_scheme"],
      ["gopher://127.0.0.1:6379/_INFO", "bad_scheme"],
      ["http://user:pass@public.test/", "bad_url"],
      ["http://public.test:6379/", "blocked_port"],
    ];
    const secretHits = () => canary.hits.filter((hit) => hit.url === "/secret").length;
    for (const status of REDIRECT_STATUSES) {
      for (const [location, reason] of targets) {
        const path = `/redirect-${status}-${encodeURIComponent(location)}`;
        canary.route(path, (response) => response.writeHead(status, { location }).end());
        const result = await fetchSafely(`http://public.test${path}`, {
          settings: settings({ allowedPorts: [80, 443, canary.port] }),
          network: net,
        });
        assertRefused(result, reason, `${status} → ${location}`);
      }
    }
    assert.equal(secretHits(), 0);
    // Only the redirecting page itself was ever connected to.
    assert.ok(net.attempts.every((attempt) => attempt.address === PUBLIC_TEST_IPV4));
    assert.deepEqual(net.violations, []);
  });

  test("relative redirects resolve against the redirecting URL and are followed", async () => {
    canary.route("/old", (response) => response.writeHead(301, { location: "new/place?q=1#frag" }).end());
    canary.route("/new/place?q=1", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("moved"),
    );
    const fetched = ok(
      await fetchSafely("http://public.test/old", { settings: settings(), network: network() }),
    );
    assert.equal(fetched.url, "http://public.test/new/place?q=1");
    assert.equal(fetched.redirects, 1);
    assert.equal(fetched.body.toString(), "moved");
  });

  test("at most max_redirects redirects are followed", async () => {
    for (let step = 0; step < 6; step += 1) {
      canary.route(`/chain-${step}`, (response) =>
        response.writeHead(302, { location: `/chain-${step + 1}` }).end(),
      );
    }
    canary.route("/chain-6", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("end"),
    );
    const net = network();
    const tooMany = await fetchSafely("http://public.test/chain-0", { settings: settings(), network: net });
    assertRefused(tooMany, "too_many_redirects", "6 redirects");
    assert.equal(canary.hits.filter((hit) => hit.url === "/chain-6").length, 0);

    const fiveAllowed = ok(
      await fetchSafely("http://public.test/chain-1", { settings: settings(), network: net }),
    );
    assert.equal(fiveAllowed.redirects, 5);
    assertRefused(
      await fetchSafely("http://public.test/chain-5", {
        settings: settings({ maxRedirects: 0 }),
        network: net,
      }),
      "too_many_redirects",
      "no redirects allowed",
    );
  });

  test("a redirect without a Location is an http_status failure", async () => {
    canary.route("/no-location", (response) => response.writeHead(302).end());
    const result = await fetchSafely("http://public.test/no-location", {
      settings: settings(),
      network: network(),
    });
    assertRefused(result, "http_status", "302 without Location");
    assert.equal(!result.ok && result.status, 302);
  });
});

describe("URL parser differentials", () => {
  test("ambiguous URLs are refused or normalised to the host that is then checked and connected", async () => {
    const net = network({ loopbackPorts: [80] });
    const refused: Array<[string, string]> = [
      ["http://public.test@127.0.0.1/", "bad_url"],
      ["http://127.0.0.1#@public.test/", "blocked_address"],
      ["http://127.0.0.\t1/", "blocked_address"],
      ["http://127.0.\n0.1/", "blocked_address"],
      ["http://127。0。0。1/", "blocked_address"],
      ["http://ｌｏｃａｌｈｏｓｔ/", "blocked_address"],
      ["http://127.0.0.1./", "blocked_address"],
      ["http://%31%32%37.0.0.1/", "blocked_address"],
      ["  http://169.254.169.254/", "blocked_address"],
      ["http://public.test:0/", "blocked_port"],
      ["http://public.test:65536/", "bad_url"],
      ["http://[::1/", "bad_url"],
      ["not a url", "bad_url"],
      [`http://public.test/${"a".repeat(5000)}`, "bad_url"],
    ];
    for (const [url, reason] of refused) {
      assertRefused(
        await fetchSafely(url, { settings: settings(), network: net }),
        reason,
        JSON.stringify(url),
      );
    }
    assert.equal(net.attempts.length, 0);

    // A backslash ends the authority in http URLs: the host is public.test, "@127.0.0.1" is path.
    canary.route("/@127.0.0.1/", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("path"),
    );
    canary.route("/tabbed", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("tab"),
    );
    assert.equal(
      ok(
        await fetchSafely("http://public.test\\@127.0.0.1/", { settings: settings(), network: net }),
      ).body.toString(),
      "path",
    );
    assert.equal(
      ok(
        await fetchSafely(" http://pub\tlic.test/tabbed ", { settings: settings(), network: net }),
      ).body.toString(),
      "tab",
    );
    assert.deepEqual(
      net.attempts.map((attempt) => attempt.address),
      [PUBLIC_TEST_IPV4, PUBLIC_TEST_IPV4],
    );
  });
});

describe("schemes and ports", () => {
  test("only http and https are fetched, and http only when allowed", async () => {
    const net = network();
    for (const url of [
      "file:///etc/passwd",
      "ftp://public.test/",
      "gopher://public.test/",
      "dict://public.test:11211/",
      "ws://public.test/",
      "wss://public.test/",
      "javascript:alert(1)",
      "blob:https://public.test/0b5e1c2a",
      "data:text/plain,hello",
    ]) {
      assertRefused(await fetchSafely(url, { settings: settings(), network: net }), "bad_scheme", url);
    }
    const httpsOnly = await fetchSafely("http://public.test/", {
      settings: settings({ allowHttp: false }),
      network: net,
    });
    assertRefused(httpsOnly, "bad_scheme", "http with allow_http off");
    assert.deepEqual(net.attempts, []);
  });

  test("ports outside the allowed list are refused before any lookup", async () => {
    const net = network();
    for (const port of [6379, 5432, 2375, 11211, 25, 22, 8080]) {
      assertRefused(
        await fetchSafely(`http://public.test:${port}/`, { settings: settings(), network: net }),
        "blocked_port",
        String(port),
      );
    }
    assertRefused(
      await fetchSafely("https://public.test:80/", {
        settings: settings({ allowedPorts: [443] }),
        network: net,
      }),
      "blocked_port",
      "https on 80",
    );
    assert.deepEqual(net.lookups, []);
    assert.deepEqual(net.attempts, []);
  });
});

describe("response limits", () => {
  test("a body over the byte cap is abandoned, with or without a declared length", async () => {
    const big = Buffer.alloc(1024 * 1024, "x");
    canary.route("/big-declared", (response) =>
      response
        .writeHead(200, { "content-type": "text/plain", "content-length": String(big.length) })
        .end(big),
    );
    canary.route("/big-chunked", (response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end(big);
    });
    let written = 0;
    canary.route("/endless", (response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(16 * 1024, "y");
      const pump = () => {
        while (!response.destroyed && written < 512 * 1024 * 1024) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
      };
      response.on("close", () => undefined);
      pump();
    });
    const capped = settings({ maxBytes: 64 * 1024 });
    for (const path of ["/big-declared", "/big-chunked", "/endless"]) {
      const result = await fetchSafely(`http://public.test${path}`, { settings: capped, network: network() });
      assertRefused(result, "too_large", path);
    }
    // The endless stream stopped soon after the cap (socket buffers aside), not after 512 MiB.
    assert.ok(written < 32 * 1024 * 1024, `wrote ${written} bytes`);
  });

  test("compression bombs are capped by their decoded size", async () => {
    // 16 MiB of zeros compress to about 16 KiB (gzip) and 30 bytes (brotli); the cap is 256 KiB.
    const zeros = Buffer.alloc(16 * 1024 * 1024);
    const gzipped = gzipSync(zeros, { level: 1 });
    const brotli = brotliCompressSync(zeros, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    canary.route("/gzip-bomb", (response) =>
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(gzipped),
    );
    canary.route("/br-bomb", (response) =>
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "br" }).end(brotli),
    );
    for (const path of ["/gzip-bomb", "/br-bomb"]) {
      const result = await fetchSafely(`http://public.test${path}`, {
        settings: settings({ maxBytes: 256 * 1024 }),
        network: network(),
      });
      assertRefused(result, "too_large", path);
    }
  });

  test("compressed bodies under the cap are decoded; broken or unknown encodings fail cleanly", async () => {
    const text = "compressed page ".repeat(1000);
    canary.route("/gzip", (response) =>
      response
        .writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        .end(gzipSync(text)),
    );
    canary.route("/br", (response) =>
      response
        .writeHead(200, { "content-type": "text/plain", "content-encoding": "br" })
        .end(brotliCompressSync(text)),
    );
    canary.route("/corrupt", (response) =>
      response
        .writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        .end("not gzip at all"),
    );
    canary.route("/zstd", (response) =>
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "zstd" }).end("x"),
    );
    for (const path of ["/gzip", "/br"]) {
      const fetched = ok(
        await fetchSafely(`http://public.test${path}`, { settings: settings(), network: network() }),
      );
      assert.equal(fetched.body.toString(), text);
    }
    for (const path of ["/corrupt", "/zstd"]) {
      assertRefused(
        await fetchSafely(`http://public.test${path}`, { settings: settings(), network: network() }),
        "bad_response",
        path,
      );
    }
  });

  test("one deadline covers a server that never answers and one that drips", async () => {
    canary.route("/stall", () => undefined);
    canary.route("/drip", (response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => response.write("."), 100);
      response.on("close", () => clearInterval(timer));
    });
    for (const path of ["/stall", "/drip"]) {
      const started = performance.now();
      const result = await fetchSafely(`http://public.test${path}`, {
        settings: settings({ timeoutMs: 500 }),
        network: network(),
      });
      const took = performance.now() - started;
      assertRefused(result, "timeout", path);
      assert.ok(took >= 450 && took < 3000, `${path} took ${took} ms`);
    }
  });

  test("a non-2xx answer is an http_status failure", async () => {
    canary.route("/gone", (response) =>
      response.writeHead(410, { "content-type": "text/html" }).end("<h1>Gone</h1>"),
    );
    const result = await fetchSafely("http://public.test/gone", { settings: settings(), network: network() });
    assertRefused(result, "http_status", "410");
    assert.equal(!result.ok && result.status, 410);
  });

  test("a type the caller refuses ends the fetch before the body is read", async () => {
    canary.route("/image", (response) =>
      response.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(4 * 1024 * 1024)),
    );
    const result = await fetchSafely("http://public.test/image", {
      settings: settings({ maxBytes: 1024 * 1024 }),
      network: network(),
      acceptContentType: (type) => type.mediaType !== "image/png",
    });
    assertRefused(result, "unsupported_type", "image/png");
    assert.equal(!result.ok && result.contentType, "image/png");
  });

  test("the caller's abort rejects with its reason", async () => {
    canary.route("/abort", () => undefined);
    const controller = new AbortController();
    const reason = new Error("client went away");
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(
      fetchSafely("http://public.test/abort", {
        settings: settings(),
        network: network(),
        signal: controller.signal,
      }),
      (error) => error === reason,
    );
  });
});

describe("what goes out", () => {
  test("only a fixed set of headers is sent, across a cross-origin redirect too", async () => {
    canary.route("/to-other", (response) =>
      response.writeHead(307, { location: "http://other.test/landing" }).end(),
    );
    otherCanary.route("/landing", (response) =>
      response.writeHead(200, { "content-type": "text/plain" }).end("ok"),
    );
    const before = canary.hits.length;
    const otherBefore = otherCanary.hits.length;
    ok(await fetchSafely("http://public.test/to-other", { settings: settings(), network: network() }));
    const sent = [...canary.hits.slice(before), ...otherCanary.hits.slice(otherBefore)];
    assert.equal(sent.length, 2);
    for (const hit of sent) {
      assert.equal(hit.method, "GET");
      assert.deepEqual(Object.keys(hit.headers).sort(), [
        "accept",
        "accept-encoding",
        "connection",
        "host",
        "user-agent",
      ]);
      assert.equal(hit.headers["user-agent"], FETCH_USER_AGENT);
      assert.equal(hit.headers.connection, "close");
    }
    assert.equal(sent[0].headers.host, "public.test");
    assert.equal(sent[1].headers.host, "other.test");
  });
});
