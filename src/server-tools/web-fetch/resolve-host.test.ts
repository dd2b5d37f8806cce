/** The production resolver against a DNS server on loopback (no outside DNS is ever asked). */
import assert from "node:assert/strict";
import { createSocket, type Socket } from "node:dgram";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { createHostResolver, HostResolutionError } from "./resolve-host.js";

const A = 1;
const AAAA = 28;
/** name → records; a missing name is NXDOMAIN; "silent.test" is never answered. */
const ZONE: Record<string, { a?: number[][]; aaaa?: number[][] }> = {
  "dual.test": {
    a: [[93, 184, 215, 14]],
    aaaa: [[0x26, 0x06, 0x28, 0, 0x02, 0x1f, 0xcb, 7, 0x68, 0x20, 0x80, 0xda, 0xaf, 0x6b, 0x8b, 0x2c]],
  },
  "v4only.test": {
    a: [
      [10, 0, 0, 1],
      [93, 184, 215, 15],
    ],
  },
};

let server: Socket;
let servers: string[];

before(async () => {
  server = createSocket("udp4");
  server.on("message", (query, peer) => {
    const answer = answerQuery(query);
    if (answer) server.send(answer, peer.port, peer.address);
  });
  server.bind(0, "127.0.0.1");
  await once(server, "listening");
  servers = [`127.0.0.1:${(server.address() as AddressInfo).port}`];
});

after(() => server.close());

/** A minimal authoritative answer: the question echoed, one record per address. */
function answerQuery(query: Buffer): Buffer | undefined {
  const labels: string[] = [];
  let offset = 12;
  while (query[offset] !== 0) {
    labels.push(query.subarray(offset + 1, offset + 1 + query[offset]).toString());
    offset += query[offset] + 1;
  }
  const questionEnd = offset + 5;
  const type = query.readUInt16BE(offset + 1);
  const name = labels.join(".").toLowerCase();
  if (name === "silent.test") return undefined;
  const entry = ZONE[name];
  const records = entry === undefined ? [] : ((type === A ? entry.a : type === AAAA ? entry.aaaa : []) ?? []);
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8400 | (entry === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((bytes) => {
    const record = Buffer.alloc(12 + bytes.length);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(type, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(60, 6);
    record.writeUInt16BE(bytes.length, 10);
    Buffer.from(bytes).copy(record, 12);
    return record;
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
}

test("A and AAAA answers are both returned, IPv4 first", async () => {
  const resolve = createHostResolver({ servers });
  assert.deepEqual(await resolve("dual.test", new AbortController().signal), [
    "93.184.215.14",
    "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
  ]);
  assert.deepEqual(await resolve("v4only.test.", new AbortController().signal), [
    "10.0.0.1",
    "93.184.215.15",
  ]);
});

test("a name that does not exist fails with its DNS code", async () => {
  const resolve = createHostResolver({ servers });
  await assert.rejects(
    resolve("nowhere.test", new AbortController().signal),
    (error) => error instanceof HostResolutionError && error.code === "ENOTFOUND",
  );
});

test("an abort cancels a lookup the server never answers", async () => {
  const resolve = createHostResolver({ servers, queryTimeoutMs: 10_000 });
  const controller = new AbortController();
  const reason = new Error("deadline");
  setTimeout(() => controller.abort(reason), 100);
  const started = performance.now();
  await assert.rejects(resolve("silent.test", controller.signal), (error) => error === reason);
  assert.ok(performance.now() - started < 2000);
});
