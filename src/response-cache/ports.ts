/**
 * Where the response cache keeps its entries (storage/response-cache/ implements this): Redis in
 * distributed mode, a bounded in-process store embedded. Values are opaque text; each expires
 * after its time-to-live.
 */
export interface ResponseCacheStore {
  /** The value, or undefined when absent or expired. */
  get(key: string): Promise<string | undefined>;
  /** Stores `value` under `key` for `ttlSeconds`, replacing any value. */
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
}
