import { InvalidUrlError, tryNormalizeUrl } from '@crawlq/urls';
import { decodeRobotsBody } from './decode-robots-body.js';
import { LruCache } from './lru-cache.js';
import { canonicalPath } from './match-path.js';
import { isPathAllowed, parseRobotsTxt, type RobotsRules } from './parse-robots-txt.js';
import { productTokenOf } from './product-token.js';
import { RobotsFetchPostponedError, RobotsOptionsError } from './errors.js';
import { planRetry, type FailureStreak } from './retry-schedule.js';
import { RobotsStore, type RobotsOutcome, type StoredRobots, type StoredRobotsRead } from './robots-store.js';
import type { RedisClient } from '@crawlq/redis';

/** What the caller's fetch returns for a robots.txt URL. */
export interface RobotsFetchResponse {
  /** Final HTTP status after redirects. */
  readonly status: number;
  /** The body; only the first `maxBytes` are parsed. */
  readonly body: Uint8Array;
  /** The URL the redirects ended at. */
  readonly finalUrl: string;
  /** The body was cut before its end (the fetch read only a prefix). */
  readonly truncated?: boolean;
  /** A 429 or 503's `Retry-After`, in ms. */
  readonly retryAfterMs?: number;
}

/**
 * The caller's fetch for robots.txt: it passes the per-domain rate gate, follows
 * up to 5 redirects (RFC 9309 2.3.1.2), returns any HTTP status (429 and 5xx
 * with their `Retry-After`), and throws on network errors and timeouts. It
 * should read no more of the body than `maxBytes + 1` bytes (a longer body is
 * cut there, `truncated`), never fail on size: an over-size robots.txt still
 * has rules in its first `maxBytes` (RFC 9309 2.5). It throws
 * `RobotsFetchPostponedError` when it may not send the request now; `check`
 * then rejects with that error, nothing stored. `signal` aborts when
 * `fetchTimeoutMs` has passed (the policy stops waiting either way).
 */
export type FetchRobots = (
  robotsUrl: string,
  context: { readonly signal: AbortSignal; readonly maxBytes: number },
) => Promise<RobotsFetchResponse>;

/** Options for {@link createRobotsPolicy}. */
export interface RobotsPolicyOptions {
  /** Connection for the shared cache; only HGETALL/PTTL/HSET/PEXPIRE/DEL (in MULTI), SET NX and EVAL are run. */
  readonly redis: RedisClient;
  /** Start of every key; use the crawl's hash tag (`{crawl}:cq:robots`) so keys share a Cluster slot. */
  readonly prefix: string;
  /** The full User-Agent header; rules are matched against its product token (`crawlq` in `crawlq/0.1 (+...)`). */
  readonly userAgent: string;
  /** Fetches a robots.txt URL; see {@link FetchRobots}. */
  readonly fetchRobots: FetchRobots;
  /**
   * How long a fetched robots.txt (2xx or 4xx) is used before it is fetched again
   * (RFC 9309 2.4: SHOULD NOT be more than 24 hours).
   * @default 86_400_000 (24 h)
   */
  readonly ttlMs?: number;
  /**
   * After a 5xx, 429, network error or timeout, everything on the origin is
   * disallowed and robots.txt is fetched again with backoff; a failure once the
   * failures have lasted this long gives up (verdict `gave-up`), so the
   * origin's URLs can be dead-lettered instead of waiting for ever. A given-up
   * origin is fetched again after the same time.
   * @default 120_000 (2 min)
   */
  readonly retryBudgetMs?: number;
  /**
   * First backoff after a failed fetch without `Retry-After`; it doubles each time.
   * @default 1_000
   */
  readonly firstRetryMs?: number;
  /**
   * Cap on a 429 or 503's `Retry-After` (the crawl's `--max-pause`).
   * @default 3_600_000 (1 h)
   */
  readonly maxRetryAfterMs?: number;
  /**
   * Only the first `maxBytes` of a body are parsed (RFC 9309 2.5: at least 500 KiB).
   * @default 512_000 (500 KiB)
   */
  readonly maxBytes?: number;
  /**
   * Cap for `Crawl-delay`, so a site cannot stall the crawl of its group for hours.
   * @default 30_000
   */
  readonly maxCrawlDelayMs?: number;
  /**
   * Longest wait for `fetchRobots` (including its wait at the rate gate); after it,
   * the origin counts as unreachable. Workers waiting for another worker's fetch
   * wait up to this plus 5 s.
   * @default 60_000
   */
  readonly fetchTimeoutMs?: number;
  /**
   * Stops the policy's work when its process stops: a fetch in flight is cut
   * (its request aborted), nothing is stored for it (a stop is not the
   * origin's failure: no `unreachable` for the fleet), its lock is given
   * back, and every check waiting on it, or on another worker's fetch,
   * rejects at once with the signal's reason. Without it a check waits for
   * the fetch to end, up to `fetchTimeoutMs`.
   * @default undefined (never stopped)
   */
  readonly signal?: AbortSignal;
  /**
   * Origins whose parsed rules this process keeps.
   * @default 10_000
   */
  readonly localCacheMaxEntries?: number;
  /**
   * Approximate bytes of parsed rules this process keeps, over all origins.
   * @default 67_108_864 (64 MiB)
   */
  readonly localCacheMaxBytes?: number;
}

/** Why a URL may or may not be fetched. */
export type RobotsReason = 'allowed' | 'disallowed' | 'unreachable' | 'gave-up';

/** Why robots.txt could not be had, for `unreachable` and `gave-up` verdicts. */
export interface RobotsFailure {
  /** HTTP status of the last fetch (e.g. 503), or `null` for a network error or timeout. */
  readonly status: number | null;
  /** Short description of the last failure (`HTTP 503`, `RequestError: connect ECONNREFUSED ...`). */
  readonly error: string;
  /** When the run of failed fetches began (ms since the epoch), `null` when unknown. */
  readonly since: number | null;
  /** Failed fetches in the run. */
  readonly failures: number;
}

/** The answer of {@link RobotsPolicy.check}. */
export interface RobotsVerdict {
  /** The URL may be fetched now. */
  readonly allowed: boolean;
  /**
   * `disallowed` is final for this URL (until robots.txt changes); `unreachable`
   * means robots.txt could not be fetched (5xx, 429, network error, timeout, or
   * another worker's fetch took too long): try again after `retryAfterMs`;
   * `gave-up` means it kept failing for `retryBudgetMs`: stop waiting for it.
   */
  readonly reason: RobotsReason;
  /** For `unreachable` and `gave-up`: the last failure; otherwise `null`. */
  readonly failure: RobotsFailure | null;
  /** The origin's `Crawl-delay` for our group in ms, capped at `maxCrawlDelayMs`; `null` when none. */
  readonly crawlDelayMs: number | null;
  /** `Sitemap:` URLs of the origin's robots.txt, absolute and normalised. */
  readonly sitemaps: readonly string[];
  /** The robots.txt URL that governs the checked URL. */
  readonly robotsUrl: string;
  /** For `unreachable`: ms until robots.txt will be fetched again; otherwise `null`. */
  readonly retryAfterMs: number | null;
}

/** robots.txt checks shared by a fleet of workers (RFC 9309). */
export interface RobotsPolicy {
  /**
   * For a normalised http(s) URL: may we fetch it, and the origin's crawl delay
   * and sitemaps. Fetches the origin's robots.txt when no worker of the fleet
   * has a fresh copy; concurrent checks (in this process or across the fleet)
   * share one fetch.
   *
   * @throws {InvalidUrlError} when `url` is not an absolute http(s) URL.
   * @throws {RobotsStoreError} when Redis fails (retryable).
   * @throws {RobotsFetchPostponedError} when the fetch was postponed (the host's group is paused).
   */
  check(url: string): Promise<RobotsVerdict>;
  /** Drops this process's parsed copies (tests); the shared Redis cache stays. */
  clearLocalCache(): void;
}

const DEFAULTS = {
  ttlMs: 24 * 60 * 60 * 1000,
  retryBudgetMs: 2 * 60 * 1000,
  firstRetryMs: 1_000,
  maxRetryAfterMs: 60 * 60 * 1000,
  maxBytes: 500 * 1024,
  maxCrawlDelayMs: 30_000,
  fetchTimeoutMs: 60_000,
  localCacheMaxEntries: 10_000,
  localCacheMaxBytes: 64 * 1024 * 1024,
} as const;

// Slack for the lock over the fetch timeout (a Redis round trip, a slow event loop).
const LOCK_SLACK_MS = 5_000;
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 250;
// A file listing more sitemaps than this is not a sitemap list any more.
const MAX_SITEMAPS = 1_000;
// When waiting for another worker's fetch timed out: how soon the caller may retry.
const WAIT_TIMEOUT_RETRY_MS = 1_000;

/** An origin's robots.txt as this process uses it. */
interface LocalRobots {
  readonly outcome: RobotsOutcome;
  /** For `unreachable`: the last failure, and whether the budget is spent. */
  readonly failure: RobotsFailure | null;
  readonly gaveUp: boolean;
  readonly fetchedAt: number;
  /** Local clock time after which Redis is asked again. */
  readonly expiresAt: number;
  readonly rules: RobotsRules | null;
  readonly crawlDelayMs: number | null;
  readonly sitemaps: readonly string[];
}

/** A fetch's outcome, and the server's `Retry-After` when it asked to wait. */
interface Fetched {
  readonly robots: StoredRobots;
  readonly retryAfterMs?: number | undefined;
}

/** The failure fields of an entry that is not part of a failure run. */
const NO_FAILURE = { gaveUp: false, failingSince: null, failures: 0 } as const;

interface Target {
  readonly origin: string;
  readonly robotsUrl: string;
  readonly path: string;
}

/**
 * Creates a {@link RobotsPolicy}.
 *
 * Each origin's robots.txt is fetched once per `ttlMs` for the whole fleet: a
 * worker that finds no entry in Redis takes the origin's lock (SET NX PX),
 * fetches, stores the outcome with a TTL and releases the lock; other workers
 * poll the entry meanwhile (bounded). Parsed rules stay in an in-process LRU
 * until the Redis entry they came from expires.
 *
 * Outcomes (RFC 9309 2.3.1): 2xx → the rules, from the first `maxBytes` of
 * the body however long it is (2.5); 4xx → allow everything, except 429,
 * treated like 5xx because it asks us to slow down, not that there is no
 * file; 3xx (the fetch gave up redirecting) → allow everything (2.3.1.2);
 * 5xx, 429, network error, timeout → disallow everything and fetch again after
 * the `Retry-After` (capped) or a backoff, until the failures have lasted
 * `retryBudgetMs`: then the verdict is `gave-up` for a while. The RFC also
 * allows assuming "allow everything" once a robots.txt has been unreachable
 * for 30 days; this policy never does.
 *
 * @throws {RobotsOptionsError} when `userAgent` has no product token or a number option is not positive.
 */
export function createRobotsPolicy(options: RobotsPolicyOptions): RobotsPolicy {
  const token = productTokenOf(options.userAgent);
  const settings = {
    ttlMs: positive(options, 'ttlMs'),
    retryBudgetMs: positive(options, 'retryBudgetMs'),
    firstRetryMs: positive(options, 'firstRetryMs'),
    maxRetryAfterMs: positive(options, 'maxRetryAfterMs'),
    maxBytes: positive(options, 'maxBytes'),
    maxCrawlDelayMs: positive(options, 'maxCrawlDelayMs'),
    fetchTimeoutMs: positive(options, 'fetchTimeoutMs'),
  };
  const store = new RobotsStore(options.redis, options.prefix);
  const local = new LruCache<LocalRobots>({
    maxEntries: positive(options, 'localCacheMaxEntries'),
    maxWeight: positive(options, 'localCacheMaxBytes'),
  });
  const inFlight = new Map<string, Promise<LocalRobots>>();
  const lockTtlMs = settings.fetchTimeoutMs + LOCK_SLACK_MS;

  const { signal: stop } = options;

  async function fetchOnce(target: Target): Promise<Fetched> {
    const controller = new AbortController();
    const fetchedAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let stopped: (() => void) | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`robots.txt fetch took longer than ${settings.fetchTimeoutMs} ms`);
        controller.abort(error);
        reject(error);
      }, settings.fetchTimeoutMs);
      if (stop !== undefined) {
        stopped = () => {
          const reason = stopReason(stop);
          controller.abort(reason);
          reject(reason);
        };
        stop.addEventListener('abort', stopped, { once: true });
      }
    });
    try {
      stop?.throwIfAborted();
      // The race makes the timeout (and a stop) hold even for a fetch that ignores the signal.
      const response = await Promise.race([options.fetchRobots(target.robotsUrl, { signal: controller.signal, maxBytes: settings.maxBytes }), timedOut]);
      return {
        robots: fromResponse(response, { fetchedAt, robotsUrl: target.robotsUrl, maxBytes: settings.maxBytes }),
        retryAfterMs: response.status === 429 || response.status === 503 ? response.retryAfterMs : undefined,
      };
    } catch (error) {
      if (error instanceof RobotsFetchPostponedError) throw error;
      // Cut by the stop, not failed by the origin: nothing to store.
      if (stop?.aborted === true) throw stopReason(stop);
      return { robots: { ...NO_FAILURE, outcome: 'unreachable', status: null, fetchedAt, finalUrl: target.robotsUrl, body: '', truncated: false, error: describe(error) } };
    } finally {
      clearTimeout(timer);
      if (stopped !== undefined) stop?.removeEventListener('abort', stopped);
    }
  }

  /** A failed fetch joins the origin's run of failures: when to fetch again, or give up. */
  async function failed(target: Target, fetched: Fetched): Promise<{ robots: StoredRobots; ttlMs: number; streak: (FailureStreak & { ttlMs: number }) | null }> {
    const at = fetched.robots.fetchedAt;
    const before = await store.readStreak(target.origin);
    const streak: FailureStreak = { since: before?.since ?? at, failures: (before?.failures ?? 0) + 1 };
    const plan = planRetry(streak, { at, retryAfterMs: fetched.retryAfterMs }, settings);
    const robots: StoredRobots = { ...fetched.robots, gaveUp: plan.gaveUp, failingSince: streak.since, failures: streak.failures };
    // A run that gave up ends: after the hold, the origin gets a fresh budget.
    if (plan.gaveUp) return { robots, ttlMs: settings.retryBudgetMs, streak: null };
    return { robots, ttlMs: plan.retryInMs, streak: { ...streak, ttlMs: plan.retryInMs + settings.retryBudgetMs } };
  }

  function remember(target: Target, read: StoredRobotsRead, previous: LocalRobots | undefined): LocalRobots {
    const { robots } = read;
    const expiresAt = Date.now() + read.ttlMs;
    // The same fetch as before (its Redis entry outlived our estimate): keep the parsed rules.
    const reusable = previous !== undefined && previous.fetchedAt === robots.fetchedAt && previous.outcome === robots.outcome;
    const entry: LocalRobots = reusable ? { ...previous, expiresAt } : toLocal(robots, { expiresAt, token, maxCrawlDelayMs: settings.maxCrawlDelayMs });
    local.set(target.origin, entry, weightOf(entry));
    return entry;
  }

  async function load(target: Target, previous: LocalRobots | undefined): Promise<LocalRobots> {
    const deadline = Date.now() + lockTtlMs + 1_000;
    let pollMs = FIRST_POLL_MS;
    for (;;) {
      stop?.throwIfAborted();
      const cached = await store.read(target.origin);
      if (cached !== null) return remember(target, cached, previous);
      const lock = await store.tryLock(target.origin, lockTtlMs);
      if (lock !== null) {
        try {
          // Another worker may have stored its fetch between our read and our lock.
          const raced = await store.read(target.origin);
          if (raced !== null) return remember(target, raced, previous);
          const fetched = await fetchOnce(target);
          if (fetched.robots.outcome !== 'unreachable') {
            await store.write(target.origin, fetched.robots, { ttlMs: settings.ttlMs });
            return remember(target, { robots: fetched.robots, ttlMs: settings.ttlMs }, previous);
          }
          const { robots, ttlMs, streak } = await failed(target, fetched);
          await store.write(target.origin, robots, { ttlMs, streak });
          return remember(target, { robots, ttlMs }, previous);
        } finally {
          // A failed unlock must not fail the check: the lock expires by itself.
          await store.unlock(target.origin, lock).catch(() => undefined);
        }
      }
      if (Date.now() >= deadline) {
        // The lock holder is slow or gone; do not pile a second fetch onto the origin.
        return {
          outcome: 'unreachable',
          failure: { status: null, error: 'another worker is still fetching robots.txt', since: null, failures: 0 },
          gaveUp: false,
          fetchedAt: 0,
          expiresAt: Date.now() + WAIT_TIMEOUT_RETRY_MS,
          rules: null,
          crawlDelayMs: null,
          sitemaps: [],
        };
      }
      await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())), stop);
      pollMs = Math.min(MAX_POLL_MS, Math.round(pollMs * 1.5));
    }
  }

  function robotsFor(target: Target): Promise<LocalRobots> {
    const cached = local.get(target.origin);
    if (cached !== undefined && cached.expiresAt > Date.now()) return Promise.resolve(cached);
    let pending = inFlight.get(target.origin);
    if (pending === undefined) {
      pending = load(target, cached).finally(() => inFlight.delete(target.origin));
      inFlight.set(target.origin, pending);
    }
    return pending;
  }

  return {
    async check(url: string): Promise<RobotsVerdict> {
      const target = targetOf(url);
      const robots = await robotsFor(target);
      return verdictOf(robots, target);
    },
    clearLocalCache(): void {
      local.clear();
    },
  };
}

function targetOf(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidUrlError('malformed', url, { cause: error });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidUrlError('scheme', url);
  // `origin` has scheme, host and a non-default port: one robots.txt each (RFC 9309 2.3).
  const origin = parsed.origin;
  return { origin, robotsUrl: `${origin}/robots.txt`, path: canonicalPath(parsed.pathname + parsed.search) };
}

function verdictOf(robots: LocalRobots, target: Target): RobotsVerdict {
  const base = { crawlDelayMs: robots.crawlDelayMs, sitemaps: robots.sitemaps, robotsUrl: target.robotsUrl, failure: robots.failure };
  switch (robots.outcome) {
    case 'unreachable':
      if (robots.gaveUp) return { ...base, allowed: false, reason: 'gave-up', retryAfterMs: null };
      return { ...base, allowed: false, reason: 'unreachable', retryAfterMs: Math.max(0, robots.expiresAt - Date.now()) };
    case 'allow-all':
      return { ...base, allowed: true, reason: 'allowed', retryAfterMs: null };
    case 'rules': {
      const allowed = robots.rules === null || isPathAllowed(robots.rules, target.path);
      return { ...base, allowed, reason: allowed ? 'allowed' : 'disallowed', retryAfterMs: null };
    }
  }
}

function fromResponse(
  response: RobotsFetchResponse,
  context: { fetchedAt: number; robotsUrl: string; maxBytes: number },
): StoredRobots {
  const { status } = response;
  const finalUrl = typeof response.finalUrl === 'string' && response.finalUrl !== '' ? response.finalUrl : context.robotsUrl;
  const base = { ...NO_FAILURE, status, fetchedAt: context.fetchedAt, finalUrl, body: '', truncated: false, error: '' };
  if (status >= 200 && status < 300) {
    const { text, truncated } = decodeRobotsBody(response.body, context.maxBytes, { cut: response.truncated === true });
    return { ...base, outcome: 'rules', body: text, truncated };
  }
  if (status === 429) return { ...base, outcome: 'unreachable', error: 'HTTP 429' };
  if (status >= 300 && status < 500) return { ...base, outcome: 'allow-all' };
  return { ...base, outcome: 'unreachable', error: `HTTP ${status}` };
}

function toLocal(robots: StoredRobots, context: { expiresAt: number; token: string; maxCrawlDelayMs: number }): LocalRobots {
  const failure = robots.outcome === 'unreachable' ? { status: robots.status, error: robots.error, since: robots.failingSince, failures: robots.failures } : null;
  const base = { outcome: robots.outcome, fetchedAt: robots.fetchedAt, expiresAt: context.expiresAt, failure, gaveUp: robots.gaveUp };
  if (robots.outcome !== 'rules') return { ...base, rules: null, crawlDelayMs: null, sitemaps: [] };
  const rules = parseRobotsTxt(robots.body, context.token);
  const crawlDelayMs =
    rules.crawlDelaySeconds === null ? null : Math.min(context.maxCrawlDelayMs, Math.round(rules.crawlDelaySeconds * 1000));
  // The parsed rules keep only what `check` needs; the raw sitemap strings go.
  return { ...base, rules: { ...rules, sitemaps: [] }, crawlDelayMs, sitemaps: resolveSitemaps(rules.sitemaps, robots.finalUrl) };
}

function resolveSitemaps(values: readonly string[], base: string): readonly string[] {
  const urls = new Set<string>();
  for (const value of values) {
    const result = tryNormalizeUrl(value, { base, stripTracking: false });
    if (result.ok) urls.add(result.url);
    if (urls.size >= MAX_SITEMAPS) break;
  }
  return Object.freeze([...urls]);
}

function weightOf(robots: LocalRobots): number {
  let weight = 256;
  for (const rule of robots.rules?.rules ?? []) weight += 64 + rule.pattern.length * 3;
  for (const sitemap of robots.sitemaps) weight += 32 + sitemap.length * 2;
  return weight;
}

function positive(options: RobotsPolicyOptions, name: keyof typeof DEFAULTS): number {
  const value = options[name] ?? DEFAULTS[name];
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RobotsOptionsError(name, `${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 200);
}

/** What a check stopped by `stop` rejects with: its reason (`abort()` without one gives an `AbortError`). */
function stopReason(stop: AbortSignal): Error {
  const reason: unknown = stop.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}

/** Waits `ms`; a stop ends the wait at once, rejecting with its reason. */
function sleep(ms: number, stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stop === undefined) {
      setTimeout(resolve, ms);
      return;
    }
    if (stop.aborted) {
      reject(stopReason(stop));
      return;
    }
    const onStop = (): void => {
      clearTimeout(timer);
      reject(stopReason(stop));
    };
    const timer = setTimeout(() => {
      stop.removeEventListener('abort', onStop);
      resolve();
    }, ms);
    stop.addEventListener('abort', onStop, { once: true });
  });
}
