/**
 * The server's request class (`createServer({ IncomingMessage })`): it makes Node hand only
 * WebSocket upgrades to the 'upgrade' listener.
 *
 * With an 'upgrade' listener, Node hands it every request that asks to switch protocols, whatever
 * the protocol, and takes the socket away from HTTP. A client that offers `Upgrade: h2c` on a plain
 * request (curl --http2, Java's HttpClient over http://) means "HTTP/2 if you can, else answer in
 * HTTP/1.1"; without a listener Node serves it as the request it is, and so must the gateway.
 * Node decides from the request's `upgrade` flag, read once its headers are in: this class answers
 * true only for a GET with `Upgrade: websocket` (a WebSocket handshake is a GET; and CONNECT, which
 * Node handles by itself), so every other request goes to the router as before.
 */
import { IncomingMessage } from "node:http";

const UPGRADE_REQUESTED = Symbol("upgrade requested");

type WithRequestedUpgrade = IncomingMessage & { [UPGRADE_REQUESTED]?: boolean | null };

export class WebSocketAwareIncomingMessage extends IncomingMessage {}

// An accessor on the prototype: the base constructor's `this.upgrade = null` and Node's parser go
// through it. (A TypeScript accessor cannot override the base class's `upgrade` field.)
Object.defineProperty(WebSocketAwareIncomingMessage.prototype, "upgrade", {
  configurable: true,
  enumerable: true,
  get(this: WithRequestedUpgrade): boolean | null {
    const requested = this[UPGRADE_REQUESTED] ?? null;
    if (!requested) return requested;
    if (this.method === "CONNECT") return true;
    return this.method === "GET" && isWebSocketUpgrade(this.headers.upgrade);
  },
  set(this: WithRequestedUpgrade, value: boolean | null) {
    this[UPGRADE_REQUESTED] = value;
  },
});

/** `Upgrade: websocket` (case-insensitive; a list naming it counts). */
export function isWebSocketUpgrade(upgrade: string | undefined): boolean {
  if (upgrade === undefined) return false;
  return upgrade.split(",").some((protocol) => protocol.trim().toLowerCase() === "websocket");
}
