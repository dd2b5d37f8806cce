/**
 * An answer sent before its request body fully arrived (a refusal that needs no body) says
 * `Connection: close`: the rest of the body may be dropped with the connection, so a keep-alive
 * client must not send its next request on it. Both writers: the router's (admin routes) and the
 * Node-level one of the generation endpoints.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { startTestGateway, type TestGateway } from "../helpers/test-gateway.js";

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway("embedded");
});
after(async () => {
  await gateway?.close();
});

/** Sends the head of a chunked POST and one chunk, never the end; returns the answer's head. */
function answerHeadBeforeBodyEnds(path: string, headers: string[]): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer head within 5 s: ${received}`));
    }, 5_000);
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(received.slice(0, end).toLowerCase());
    });
    socket.on("error", reject);
    socket.write(
      [`POST ${path} HTTP/1.1`, "Host: localhost", "Transfer-Encoding: chunked", ...headers, "", ""].join(
        "\r\n",
      ),
    );
    socket.write('4\r\n{"a"\r\n');
  });
}

test("a router answer before the body ended closes the connection", async () => {
  const head = await answerHeadBeforeBodyEnds("/internal/admin/workspaces", [
    "Content-Type: application/json",
  ]);
  assert.match(head, /^http\/1\.1 401/);
  assert.match(head, /\r\nconnection: close(\r\n|$)/);
});

test("a generation endpoint's refusal before the body ended closes the connection", async () => {
  const head = await answerHeadBeforeBodyEnds("/api/v1/chat/completions", [
    "Content-Type: application/json",
    "Authorization: Bearer hi-not-a-real-key",
  ]);
  assert.match(head, /^http\/1\.1 401/);
  assert.match(head, /\r\nconnection: close(\r\n|$)/);
});
