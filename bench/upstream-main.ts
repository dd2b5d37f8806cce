/** Child entry: the bench upstream on 127.0.0.1 (port chosen by the OS), ready line on stdout. */
import { announceReady, readIntegerFlag } from "./child-entry.js";
import { startBenchUpstream } from "./upstream-server.js";

const upstream = await startBenchUpstream({
  streamTokens: readIntegerFlag("stream-tokens", 24),
  slowTokens: readIntegerFlag("slow-tokens", 30),
  slowIntervalMs: readIntegerFlag("slow-interval-ms", 100),
});
announceReady(upstream.port, upstream.close);
