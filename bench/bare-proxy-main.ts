/** Child entry: the bare pass-through proxy in front of `--upstream <origin>`, ready line on stdout. */
import { startBareProxy } from "./bare-proxy.js";
import { announceReady, readStringFlag } from "./child-entry.js";

const upstreamOrigin = readStringFlag("upstream");
if (!upstreamOrigin?.startsWith("http://127.0.0.1:")) {
  throw new Error("--upstream http://127.0.0.1:<port> is required (loopback only)");
}
const proxy = await startBareProxy({ upstreamOrigin });
announceReady(proxy.port, proxy.close);
