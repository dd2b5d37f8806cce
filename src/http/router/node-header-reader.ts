/**
 * Headers of a Node request read the way web `Headers.get` reads them: names case-insensitive,
 * repeated lines joined with ", ", null when absent. Read from `rawHeaders`, not from Node's
 * `incoming.headers`, because Node keeps only the first of some repeated headers (Authorization
 * among them) where `Headers` joins them: a request with two Authorization lines must meet the same
 * key check on the generation endpoints (node-route-handler.ts) as on the routes that read web
 * `Headers`.
 */
import type { IncomingMessage } from "node:http";
import type { HeaderReader } from "../../ingress/ingress-format.js";

export function createNodeHeaderReader(incoming: IncomingMessage): HeaderReader {
  return {
    get(name: string): string | null {
      const raw = incoming.rawHeaders;
      const wanted = name.toLowerCase();
      let value: string | null = null;
      for (let index = 0; index < raw.length; index += 2) {
        const key = raw[index]!;
        if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
        value = value === null ? raw[index + 1]! : `${value}, ${raw[index + 1]!}`;
      }
      return value;
    },
  };
}
