/**
 * Item ids that carry their item, so an `item_reference` to an item the gateway produced resolves
 * without any stored state.
 *
 * Clients that believe the server stored a response (the AI SDK's Responses provider at its
 * default settings, unless `store: false`) replay earlier items as `{type: "item_reference", id}`
 * instead of the items. The gateway keeps no state, so the id itself holds the item:
 *
 *   <plain id> "." base64url(JSON of the item without its id) "." base64url(16-byte tag)
 *
 * e.g. `rs_<request id>_0.eyJ0eXBlIjoicmVhc29uaW5nIiwi….Xq3…`. The tag is HMAC-SHA256 (first 16
 * bytes) over everything before it, under a key only the gateway holds (derived from
 * INTERNAL_SHARED_SECRET, else a secret kept in the data folder: {@link deriveItemSealKey}), so an
 * id the gateway did not produce — forged, altered, or sealed under another deployment's key — is
 * refused, never read as content. Every instance of a deployment must derive the same key, or an id
 * sealed by one is refused by the others.
 *
 * Bounded: an item whose JSON exceeds {@link MAX_SEALED_ITEM_BYTES} keeps its plain id (a
 * reference to it is refused with a message saying so), and an id longer than any sealed id can be
 * is refused before any decoding or hashing.
 */
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** The largest item (JSON bytes) an id carries. */
export const MAX_SEALED_ITEM_BYTES = 128 * 1024;
const TAG_BYTES = 16;
const TAG_LENGTH = Math.ceil((TAG_BYTES * 4) / 3);
/** A plain id (`rs_<22-character request id>_<index>`) is far shorter than this. */
const MAX_PLAIN_ID_LENGTH = 64;
const MAX_SEALED_ID_LENGTH =
  MAX_PLAIN_ID_LENGTH + Math.ceil((MAX_SEALED_ITEM_BYTES * 4) / 3) + TAG_LENGTH + 2;
const KEY_INFO = "hi-gateway responses item seal v1";

export type OpenedItem =
  | { kind: "item"; item: unknown }
  /** No seal at all: a plain id (ours or anyone's). */
  | { kind: "plain" }
  /** Shaped like a sealed id, but the tag does not match: not sealed with this key. */
  | { kind: "forged" };

export interface ItemSeal {
  /** `id` with `item` (the item without its id) sealed into it; `id` itself when the item is too large. */
  seal(id: string, item: object): string;
  open(id: string): OpenedItem;
}

/** The sealing key from the deployment's root secret (the same root gives the same key everywhere). */
export function deriveItemSealKey(rootSecret: string | Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", rootSecret, "", KEY_INFO, 32));
}

export function createItemSeal(key: Buffer): ItemSeal {
  const tag = (text: string) => createHmac("sha256", key).update(text).digest().subarray(0, TAG_BYTES);
  return {
    seal(id, item) {
      const json = Buffer.from(JSON.stringify(item), "utf8");
      if (json.length > MAX_SEALED_ITEM_BYTES) return id;
      const body = `${id}.${json.toString("base64url")}`;
      return `${body}.${tag(body).toString("base64url")}`;
    },
    open(id) {
      const tagStart = id.length - TAG_LENGTH - 1;
      const payloadStart = id.indexOf(".");
      if (payloadStart < 0 || payloadStart > MAX_PLAIN_ID_LENGTH || tagStart <= payloadStart) {
        return { kind: "plain" };
      }
      if (id.length > MAX_SEALED_ID_LENGTH || id[tagStart] !== ".") return { kind: "forged" };
      const body = id.slice(0, tagStart);
      const given = Buffer.from(id.slice(tagStart + 1), "base64url");
      if (given.length !== TAG_BYTES || !timingSafeEqual(given, tag(body))) return { kind: "forged" };
      try {
        const item: unknown = JSON.parse(
          Buffer.from(body.slice(payloadStart + 1), "base64url").toString("utf8"),
        );
        return { kind: "item", item };
      } catch {
        // Sealed by this key but unreadable: not something this gateway wrote.
        return { kind: "forged" };
      }
    },
  };
}
