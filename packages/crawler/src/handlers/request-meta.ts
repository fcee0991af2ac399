import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import type { JsonObject } from './crawler-types.js';

/** What travels with a URL a route enqueued: its route and the user's data. */
export interface RequestMeta {
  readonly label?: string;
  readonly userData?: JsonObject;
}

/** userData larger than this is refused at `enqueue`: it lives in Redis until its page is handled. */
export const MAX_USER_DATA_BYTES = 64 * 1024;

/**
 * A URL's route and user data, by URL fingerprint, in one hash of the
 * namespace (cleared with it). Beside the frontier rather than inside its
 * backlog entries: the frontier's dedupe, scope and release steps stay as
 * they are. A job's URLs (one, or a batch of its group) are read together,
 * in one HMGET when the job starts, so a URL without meta (a seed, a link
 * enqueued with neither label nor data) costs no round trip of its own.
 *
 * Written before the URL is admitted (first writer wins), so a job never
 * starts before its meta is there; a writer whose URL turned out to be a
 * duplicate takes back only what it wrote. Deleted once the page's items
 * are written.
 */
export class RequestMetaStore {
  readonly #redis: RedisClient;
  readonly #key: string;

  constructor(redis: RedisClient, namespace: string) {
    this.#redis = redis;
    this.#key = `${stateKeyPrefix(namespace)}:request-meta`;
  }

  async read(fingerprint: string): Promise<RequestMeta | undefined> {
    const json = await this.#redis.hget(this.#key, fingerprint);
    return json === null ? undefined : (JSON.parse(json) as RequestMeta);
  }

  /** The meta of several URLs in one round trip: those that have one, by fingerprint. */
  async readMany(fingerprints: readonly string[]): Promise<ReadonlyMap<string, RequestMeta>> {
    const found = new Map<string, RequestMeta>();
    if (fingerprints.length === 0) return found;
    const replies = await this.#redis.hmget(this.#key, ...fingerprints);
    fingerprints.forEach((fingerprint, index) => {
      const json = replies[index];
      if (typeof json === 'string') found.set(fingerprint, JSON.parse(json) as RequestMeta);
    });
    return found;
  }

  /** Sets each URL's meta unless it has one; returns the fingerprints this call set. */
  async claim(fingerprints: readonly string[], meta: RequestMeta): Promise<string[]> {
    if (fingerprints.length === 0) return [];
    const json = JSON.stringify(meta);
    const pipeline = this.#redis.pipeline();
    for (const fingerprint of fingerprints) pipeline.hsetnx(this.#key, fingerprint, json);
    const replies = (await pipeline.exec()) ?? [];
    return fingerprints.filter((_, index) => {
      const [error, set] = replies[index] ?? [];
      if (error) throw error;
      return set === 1;
    });
  }

  async remove(fingerprints: readonly string[]): Promise<void> {
    if (fingerprints.length > 0) await this.#redis.hdel(this.#key, ...fingerprints);
  }
}
