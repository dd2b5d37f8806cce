#!/usr/bin/env node
// Runs inside a network namespace that has nothing but loopback (test/helpers/loopback-namespace.ts
// starts it under `unshare -rn`): listens on 127.0.0.1:<port>, forwards every connection to a Unix
// socket of the test process outside (filesystem sockets cross network namespaces), then runs the
// command and exits with its status. The command can reach the gateway on that port and nothing else.
// Plain JavaScript: it runs with the test's own node binary and no loader.
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const [socketPath, port, command, ...args] = process.argv.slice(2);
const relay = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream).pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
relay.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command, args, { stdio: "inherit" });
  child.on("error", (error) => {
    process.stderr.write(`loopback-relay: ${error.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
});
