import assert from "node:assert/strict";
import { test } from "node:test";
import { checkAddress, checkHostName } from "./address-policy.js";

const strict = { allowLoopback: false };
const hatch = { allowLoopback: true };

test("public unicast addresses are allowed, in canonical form", () => {
  assert.deepEqual(checkAddress("93.184.215.14", strict), {
    allowed: true,
    address: "93.184.215.14",
    family: 4,
  });
  assert.deepEqual(checkAddress("8.8.8.8", strict), { allowed: true, address: "8.8.8.8", family: 4 });
  assert.deepEqual(checkAddress("2606:2800:021f:cb07:6820:80da:af6b:8b2c", strict), {
    allowed: true,
    address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    family: 6,
  });
  // NAT64 of a public IPv4 address is how an IPv6-only network reaches an IPv4-only site.
  assert.equal(checkAddress("64:ff9b::5db8:d70e", strict).allowed, true);
});

test("every non-public IPv4 range is refused, named by its range", () => {
  const cases: Array<[string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.100.100.200", "carrierGradeNat"],
    ["169.254.169.254", "linkLocal"],
    ["169.254.170.2", "linkLocal"],
    ["198.18.0.1", "reserved"],
    ["192.0.0.170", "reserved"],
    ["192.0.2.1", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
  ];
  for (const [address, range] of cases) {
    assert.deepEqual(checkAddress(address, strict), { allowed: false, range }, address);
  }
});

test("every non-public IPv6 form is refused, including IPv4 embedded in IPv6", () => {
  const cases: Array<[string, string]> = [
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::ffff:127.0.0.1", "ipv4Mapped"],
    ["::ffff:7f00:1", "ipv4Mapped"],
    ["0:0:0:0:0:ffff:a9fe:a9fe", "ipv4Mapped"],
    ["::ffff:93.184.215.14", "ipv4Mapped"],
    ["::7f00:1", "ipv4Compatible"],
    ["::a9fe:a9fe", "ipv4Compatible"],
    ["64:ff9b::a9fe:a9fe", "nat64:linkLocal"],
    ["64:ff9b::7f00:1", "nat64:loopback"],
    ["64:ff9b::a00:1", "nat64:private"],
    ["64:ff9b:1::a9fe:a9fe", "rfc6052"],
    ["2002:7f00:1::", "6to4"],
    ["2002:a9fe:a9fe::1", "6to4"],
    ["2001::1", "teredo"],
    ["2001:db8::1", "reserved"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["fd00:ec2:0:0:0:0:0:254", "uniqueLocal"],
    ["FD00:EC2::254", "uniqueLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["fec0::1", "deprecatedSiteLocal"],
    ["ff02::1", "multicast"],
    ["100::1", "discard"],
    ["4000::1", "notGlobalUnicast"],
  ];
  for (const [address, range] of cases) {
    assert.deepEqual(checkAddress(address, strict), { allowed: false, range }, address);
  }
});

test("only strict address text is accepted: forms the socket layer would re-resolve are refused", () => {
  for (const text of [
    "0177.0.0.1",
    "127.1",
    "2130706433",
    "0x7f000001",
    "fe80::1%eth0",
    "localhost",
    "",
    "1.2.3",
  ]) {
    assert.deepEqual(checkAddress(text, strict), { allowed: false, range: "notAnAddress" }, text);
  }
});

test("the test escape hatch admits loopback and nothing else", () => {
  assert.equal(checkAddress("127.0.0.1", hatch).allowed, true);
  assert.equal(checkAddress("127.3.4.5", hatch).allowed, true);
  assert.equal(checkAddress("::1", hatch).allowed, true);
  for (const address of [
    "10.0.0.1",
    "169.254.169.254",
    "::ffff:127.0.0.1",
    "64:ff9b::7f00:1",
    "0.0.0.0",
    "::",
  ]) {
    assert.equal(checkAddress(address, hatch).allowed, false, address);
  }
});

test("host names meaning this machine or a private network are refused by name", () => {
  for (const [name, rule] of [
    ["localhost", "name:localhost"],
    ["localhost.", "name:localhost"],
    ["x.localhost", "name:localhost"],
    ["metadata.google.internal", "name:internal"],
    ["printer.local", "name:local"],
    ["router.home.arpa", "name:home.arpa"],
    ["db.localdomain", "name:localdomain"],
    ["redis", "name:singleLabel"],
    ["abc.onion", "name:onion"],
  ]) {
    assert.equal(checkHostName(name), rule, name);
  }
  for (const name of [
    "example.com",
    "public.test",
    "example.com.",
    "internal.example.com",
    "localhost.example.com",
  ]) {
    assert.equal(checkHostName(name), undefined, name);
  }
});
