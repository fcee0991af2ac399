import { randomUUID } from 'node:crypto';
import { releaseLockScript } from './lua/release-lock.js';
import { RobotsStoreError } from './errors.js';
import type { FailureStreak } from './retry-schedule.js';
import type { RedisClient } from '@crawlq/redis';

/**
 * How a robots.txt fetch ended, as far as the rules go:
 * - `rules`: 2xx, parse the body;
 * - `allow-all`: the file is unavailable (4xx except 429, or too many redirects);
 * - `unreachable`: 5xx, 429, network error or timeout; disallow everything for now.
 */
export type RobotsOutcome = 'rules' | 'allow-all' | 'unreachable';

/** One origin's robots.txt as the fleet shares it in Redis. */
export interface StoredRobots {
  readonly outcome: RobotsOutcome;
  /** HTTP status, or `null` when the fetch threw. */
  readonly status: number | null;
  /** When it was fetched (ms since the epoch, the fetching worker's clock). */
  readonly fetchedAt: number;
  /** Where the fetch ended after redirects; sitemap URLs resolve against it. */
  readonly finalUrl: string;
  /** Decoded body, cut to `maxBytes` (empty unless `outcome` is `rules`). */
  readonly body: string;
  /** The body was longer than `maxBytes`. */
  readonly truncated: boolean;
  /** Why it is unreachable, for logs (short; never the body). */
  readonly error: string;
  /** For `unreachable`: the retry budget is spent; the origin's URLs stop waiting for it. */
  readonly gaveUp: boolean;
  /** For `unreachable`: when the current run of failed fetches began (ms since the epoch), else `null`. */
  readonly failingSince: number | null;
  /** For `unreachable`: failed fetches in the current run, else 0. */
  readonly failures: number;
}

/** A stored entry and how long Redis keeps it. */
export interface StoredRobotsRead {
  readonly robots: StoredRobots;
  /** Milliseconds until the entry expires (from Redis, so workers' clocks need not agree). */
  readonly ttlMs: number;
}

/** Redis access for the robots cache: one hash per origin, a fetch lock and a failure run per origin. */
export class RobotsStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** The key of an origin's cached robots.txt. */
  entryKey(origin: string): string {
    return `${this.#prefix}:${origin}`;
  }

  /** The key of an origin's fetch lock. */
  lockKey(origin: string): string {
    return `${this.#prefix}:lock:${origin}`;
  }

  /** The cached entry, or `null` when there is none (or it is unreadable). */
  async read(origin: string): Promise<StoredRobotsRead | null> {
    const key = this.entryKey(origin);
    let replies: [Error | null, unknown][] | null;
    try {
      // One round trip, and MULTI so the TTL belongs to the hash that was read.
      replies = await this.#redis.multi().hgetall(key).pttl(key).exec();
    } catch (error) {
      throw new RobotsStoreError({ origin, operation: 'read', cause: error });
    }
    const [hashReply, ttlReply] = replies ?? [];
    const failure = hashReply?.[0] ?? ttlReply?.[0];
    if (failure) throw new RobotsStoreError({ origin, operation: 'read', cause: failure });
    const fields = hashReply?.[1];
    const ttlMs = ttlReply?.[1];
    if (typeof ttlMs !== 'number' || ttlMs === -2 || !isStringRecord(fields)) return null;
    const robots = decodeStored(fields);
    // -1 (no expiry) cannot come from `write`; treat such a foreign key as missing.
    if (robots === null || ttlMs < 0) return null;
    return { robots, ttlMs };
  }

  /** The key of an origin's run of failed fetches; it outlives the entries so the run can be counted. */
  streakKey(origin: string): string {
    return `${this.#prefix}:failing:${origin}`;
  }

  /** The origin's current run of failed fetches, or `null` when the last fetch did not fail. */
  async readStreak(origin: string): Promise<FailureStreak | null> {
    let fields: Record<string, string>;
    try {
      fields = await this.#redis.hgetall(this.streakKey(origin));
    } catch (error) {
      throw new RobotsStoreError({ origin, operation: 'read', cause: error });
    }
    const since = Number(fields['since']);
    const failures = Number(fields['failures']);
    return Number.isFinite(since) && Number.isInteger(failures) && failures > 0 ? { since, failures } : null;
  }

  /**
   * Stores an entry that expires after `ttlMs`, and in the same transaction
   * the origin's failure run: kept for `streak.ttlMs` when given, deleted when
   * absent (a fetch that did not fail, or a run that gave up, ends it).
   */
  async write(origin: string, robots: StoredRobots, expiry: { ttlMs: number; streak?: (FailureStreak & { ttlMs: number }) | null }): Promise<void> {
    const { ttlMs } = expiry;
    const streak = expiry.streak ?? null;
    const key = this.entryKey(origin);
    const fields = {
      outcome: robots.outcome,
      status: robots.status === null ? '' : String(robots.status),
      fetchedAt: String(robots.fetchedAt),
      finalUrl: robots.finalUrl,
      body: robots.body,
      truncated: robots.truncated ? '1' : '0',
      error: robots.error,
      gaveUp: robots.gaveUp ? '1' : '0',
      failingSince: robots.failingSince === null ? '' : String(robots.failingSince),
      failures: String(robots.failures),
    };
    const streakKey = this.streakKey(origin);
    try {
      const transaction = this.#redis.multi().del(key).hset(key, fields).pexpire(key, Math.max(1, Math.round(ttlMs))).del(streakKey);
      if (streak !== null) {
        transaction.hset(streakKey, { since: String(streak.since), failures: String(streak.failures) }).pexpire(streakKey, Math.max(1, Math.round(streak.ttlMs)));
      }
      const replies = await transaction.exec();
      const failure = replies?.find(([error]) => error !== null)?.[0];
      if (failure) throw failure;
    } catch (error) {
      throw new RobotsStoreError({ origin, operation: 'write', cause: error });
    }
  }

  /** Takes the origin's fetch lock for `ttlMs`; returns its token, or `null` if another worker holds it. */
  async tryLock(origin: string, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    try {
      const reply = await this.#redis.set(this.lockKey(origin), token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX');
      return reply === 'OK' ? token : null;
    } catch (error) {
      throw new RobotsStoreError({ origin, operation: 'lock', cause: error });
    }
  }

  /** Releases the lock if `token` still holds it. */
  async unlock(origin: string, token: string): Promise<void> {
    try {
      await releaseLockScript.run(this.#redis, [this.lockKey(origin)], [token]);
    } catch (error) {
      throw new RobotsStoreError({ origin, operation: 'unlock', cause: error });
    }
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null;
}

function decodeStored(fields: Record<string, string>): StoredRobots | null {
  const outcome = fields['outcome'];
  if (outcome !== 'rules' && outcome !== 'allow-all' && outcome !== 'unreachable') return null;
  const fetchedAt = Number(fields['fetchedAt']);
  if (!Number.isFinite(fetchedAt)) return null;
  const status = fields['status'] === undefined || fields['status'] === '' ? null : Number(fields['status']);
  const failingSince = fields['failingSince'] === undefined || fields['failingSince'] === '' ? null : Number(fields['failingSince']);
  const failures = Number(fields['failures'] ?? '0');
  return {
    outcome,
    status: status === null || Number.isFinite(status) ? status : null,
    fetchedAt,
    finalUrl: fields['finalUrl'] ?? '',
    body: fields['body'] ?? '',
    truncated: fields['truncated'] === '1',
    error: fields['error'] ?? '',
    gaveUp: fields['gaveUp'] === '1',
    failingSince: failingSince !== null && Number.isFinite(failingSince) ? failingSince : null,
    failures: Number.isInteger(failures) && failures > 0 ? failures : 0,
  };
}
