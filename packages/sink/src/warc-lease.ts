/**
 * Who may still write a `.open` WARC file. Each writer holds a lease under its
 * id (`HOST-PID-RANDOM`, the tail of its file names) in a store every worker of
 * the crawl shares (Redis: its TTL runs on the server's clock, so hosts with
 * skewed clocks agree on when a lease ends). A file whose writer holds no lease
 * is left by a stopped writer and may be recovered.
 */
export interface WarcWriterLease {
  /** Takes or extends `writer`'s lease for `ttlMs`; resolves once the store holds it. */
  hold(writer: string, ttlMs: number): Promise<void>;
  /** Ends `writer`'s lease (its files are closed). */
  release(writer: string): Promise<void>;
  /** Milliseconds left on `writer`'s lease; 0 when it holds none. */
  remainingMs(writer: string): Promise<number>;
}

/** A writer's lease lasts this long after each renewal. */
export const WARC_LEASE_TTL_MS = 20_000;
/** A writer renews its lease this often while it has a file open. */
export const WARC_LEASE_RENEW_MS = 5_000;
/**
 * A writer stops writing into its open file once this long has passed since
 * the last renewal it sent (it closes the file, renews, and starts another).
 * The lease outlives that point by 10 s, the room left for a write already
 * under way: no file is recovered while its writer may still append to it.
 */
export const WARC_LEASE_FENCE_MS = 10_000;
