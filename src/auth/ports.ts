/**
 * What authentication needs from outside: storage implements these ports, the gateway wires them.
 */
import type {
  ApiKeyWithWorkspace,
  MintedPlaygroundKey,
  OneTimeKeySource,
  PlaygroundMintRefusal,
} from "./accounts.js";

export interface ApiKeyLookup {
  /** The key whose secret hashes to `hash`, with its workspace; null when unknown. */
  findByHash(hash: string): Promise<ApiKeyWithWorkspace | null>;
}

/**
 * One-time keys for the platform application. Every key whose source is not `api` is one of
 * these: usable once, until it expires, then hard-purged.
 */
export interface PlaygroundKeyRepository {
  /** Mints a key unless the user already minted `limit` keys within `windowMs`. */
  mint(input: {
    workspaceId: string;
    userId: string;
    source: OneTimeKeySource;
    ttlMs: number;
    limit: number;
    windowMs: number;
  }): Promise<MintedPlaygroundKey | PlaygroundMintRefusal>;
  /**
   * Marks the key used in one conditional UPDATE; true only for the single caller that found it
   * unused and unexpired, on any instance.
   */
  consume(keyId: string): Promise<boolean>;
  /** Deletes expired one-time keys (usage records stay); returns how many went. */
  purgeExpired(): Promise<number>;
}

export interface AuthStore {
  apiKeys: ApiKeyLookup;
  playgroundKeys: PlaygroundKeyRepository;
}

/**
 * Messages between instances (Redis pub/sub, or in-process in embedded mode): how a change made
 * on one instance evicts the caches of every other. Also used by the engine and admin.
 */
export interface Announcements {
  publish(channel: string, message: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
}
