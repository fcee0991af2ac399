import { CRAWL_JOB_NAME, crawlJobOptions, type CrawlJobData, type CrawlJobPolicy, type CrawlQueue } from '@crawlq/queue';
import { createScopeFilter, normalizeUrl, politenessGroupOf, tryNormalizeUrl, urlFingerprint, type GroupBy, type GroupRule, type ScopeMode } from '@crawlq/urls';
import type { RedisClient } from '@crawlq/redis';
import { ReserveCode } from './commands/seen-script-status.js';
import { frontierKeys, type FrontierKeys } from './keys.js';
import type { SeenSetMode } from './seen-set-mode.js';
import { SeenSet } from './seen-set.js';

/** Crawl-wide rules the frontier applies to every URL it admits. */
export interface FrontierSettings {
  readonly scope: ScopeMode;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly maxDepth: number;
  readonly maxPages?: number | undefined;
  readonly maxPagesPerGroup?: number | undefined;
  readonly groupBy: GroupBy;
  /**
   * Custom politeness groups: a URL whose host matches `match` (a host glob,
   * first match wins) belongs to `group` instead of its host or domain, e.g.
   * several CDN hosts that share one origin server.
   */
  readonly groupRules?: readonly GroupRule[] | undefined;
  readonly sortQuery: boolean;
  readonly jobPolicy: CrawlJobPolicy;
  /**
   * How admitted URLs are remembered: exactly, or in a Bloom filter of fixed
   * size whose false positives skip a new URL (see `SeenSetMode`). Every
   * process of a crawl must use the same mode.
   * @default { mode: 'exact' }
   */
  readonly seenSet?: SeenSetMode | undefined;
}

/** Spreads each group's backlog over time; see `@crawlq/group-limiter` plan(). */
export interface SlotPlanner {
  plan(groups: readonly string[]): Promise<number[]>;
}

export interface FrontierOptions {
  readonly redis: RedisClient;
  readonly queue: CrawlQueue;
  readonly planner: SlotPlanner;
  readonly namespace: string;
  readonly settings: FrontierSettings;
}

/** One input the frontier refused, for `enqueue`'s per-line report. */
export interface RejectedUrl {
  /** Position in the batch given to `add` (callers map it to a line number). */
  readonly index: number;
  readonly input: string;
  readonly reason: string;
  readonly message: string;
}

/** What happened to a batch of URLs. */
export interface AddResult {
  readonly accepted: number;
  readonly duplicate: number;
  readonly outOfScope: number;
  readonly tooDeep: number;
  readonly overLimit: number;
  readonly rejected: readonly RejectedUrl[];
  /** Normalised URLs that were enqueued, in input order. */
  readonly acceptedUrls: readonly string[];
}

const SCOPE_REFRESH_MS = 2_000;
/** BullMQ accepts priorities up to 2^21. */
const MAX_PRIORITY = 2_097_152;

/**
 * The crawl frontier: normalises, scopes, dedupes and budgets URLs, and
 * enqueues the survivors as BullMQ jobs whose start is spread per group.
 * Seeds and discovered links take the same path.
 */
export class Frontier {
  readonly #redis: RedisClient;
  readonly #queue: CrawlQueue;
  readonly #planner: SlotPlanner;
  readonly #keys: FrontierKeys;
  readonly #settings: FrontierSettings;
  readonly #seen: SeenSet;
  #scope: { filter: (url: string) => boolean; anchors: number; loadedAt: number } | undefined;
  /**
   * Fingerprints this process is admitting right now: between reserve and
   * mark, the seen-set does not know them yet, so a second batch of this
   * process holding the same URL is answered here (a duplicate) instead of
   * enqueueing it twice.
   */
  readonly #admitting = new Set<string>();

  constructor(options: FrontierOptions) {
    this.#redis = options.redis;
    this.#queue = options.queue;
    this.#planner = options.planner;
    this.#keys = frontierKeys(options.namespace);
    this.#settings = options.settings;
    this.#seen = new SeenSet({ redis: options.redis, namespace: options.namespace, mode: options.settings.seenSet });
  }

  /** The crawl's seen-set (for status and benchmarks; `addSeeds`/`addDiscovered`/`claim` keep it up to date). */
  get seenSet(): SeenSet {
    return this.#seen;
  }

  /**
   * Marks `url` (normalised like every other URL) seen at once, atomically;
   * true if it was new. For a fetch that was redirected: a redirect to a page
   * already seen need not be followed, and a page reached by a redirect is not
   * enqueued again when a link to it turns up later. Budgets are not charged
   * (the redirected job was).
   *
   * `owner` is the claiming job's id (the fingerprint of its own URL, which the
   * frontier uses as job id): a later claim by the same owner is true again, so
   * a job that is deferred or retried after claiming still fetches the page, and
   * a redirect back to the job's own URL is always true.
   * @throws InvalidUrlError when the URL cannot be crawled (never retryable)
   * @throws SeenSetMismatchError when the crawl's seen-set is in the other mode
   */
  async claim(url: string, owner?: string): Promise<boolean> {
    const fingerprint = urlFingerprint(normalizeUrl(url, { sortQuery: this.#settings.sortQuery }));
    if (owner !== undefined && owner === fingerprint) return true;
    return this.#seen.claim(fingerprint, owner);
  }

  /**
   * Whether a URL (e.g. a redirect's target) is inside the crawl's scope and
   * include/exclude rules; a URL that cannot be crawled at all is not.
   */
  async inScope(url: string): Promise<boolean> {
    const normalised = tryNormalizeUrl(url, { sortQuery: this.#settings.sortQuery });
    if (!normalised.ok) return false;
    return (await this.#scopeFilter())(normalised.url);
  }

  /**
   * The crawl's scope decision for URLs judged from `anchors` alone, under
   * its scope mode and include/exclude rules: how the pages a sitemap lists
   * are judged (from the sitemap's own URL), and how the frontier judges
   * links and redirects (from the seeds' origins). Every scope check of a
   * crawl is built here.
   * @throws InvalidUrlError when an anchor is not a valid URL
   */
  scopeAround(anchors: readonly string[]): (url: string) => boolean {
    const { scope, include, exclude } = this.#settings;
    return scope !== 'any' && anchors.length === 0 ? () => false : createScopeFilter({ mode: scope, seeds: anchors, include, exclude });
  }

  /**
   * Hands a redirect's target over as a job of its own (at the redirected
   * job's depth, carrying the hops so far so the chain stays bounded), after
   * claiming it for `owner` like {@link claim}: `'seen'` when another job has
   * it already, `'self'` when it is `owner`'s own URL (nothing to hand over).
   * Budgets are not charged (the redirected job was). Scope is the caller's
   * check ({@link inScope}).
   */
  async enqueueRedirect(url: string, options: { readonly owner: string; readonly depth: number; readonly redirects: number }): Promise<'queued' | 'seen' | 'self'> {
    const normalised = normalizeUrl(url, { sortQuery: this.#settings.sortQuery });
    const fingerprint = urlFingerprint(normalised);
    if (fingerprint === options.owner) return 'self';
    // Claimed before the job exists: if this process dies in between, the
    // redirected job is retried and claims again as the same owner.
    if (!(await this.#seen.claim(fingerprint, options.owner))) return 'seen';
    const group = this.groupOf(normalised);
    const [delay] = await this.#planner.plan([group]);
    await this.#queue.add(CRAWL_JOB_NAME, { url: normalised, depth: options.depth, group, redirects: options.redirects } satisfies CrawlJobData, {
      ...crawlJobOptions(this.#settings.jobPolicy),
      jobId: fingerprint,
      delay: delay ?? 0,
      priority: Math.min(options.depth + 1, MAX_PRIORITY),
    });
    return 'queued';
  }

  /** Seeds: depth 0, always in scope; their origins anchor `host`/`domain` scope. */
  async addSeeds(inputs: readonly string[]): Promise<AddResult> {
    const { urls, rejected } = this.#normalise(inputs);
    const anchors = [...new Set(urls.map(({ url }) => new URL(url).origin + '/'))];
    if (anchors.length > 0) await this.#redis.sadd(this.#keys.scopeAnchors, ...anchors);
    this.#scope = undefined;
    return this.#admit(urls, { depth: 0, rejected, outOfScope: 0, tooDeep: 0 });
  }

  /** Links found on a page at `parentDepth`; out-of-scope and too-deep ones are counted, not enqueued. */
  async addDiscovered(links: readonly string[], parentDepth: number): Promise<AddResult> {
    const depth = parentDepth + 1;
    const { urls, rejected } = this.#normalise(links);
    if (depth > this.#settings.maxDepth) {
      return emptyResult({ rejected, tooDeep: urls.length });
    }
    const inScope = await this.#scopeFilter();
    const kept = urls.filter(({ url }) => inScope(url));
    return this.#admit(kept, { depth, rejected, outOfScope: urls.length - kept.length, tooDeep: 0 });
  }

  #normalise(inputs: readonly string[]): { urls: { url: string; index: number }[]; rejected: RejectedUrl[] } {
    const urls: { url: string; index: number }[] = [];
    const rejected: RejectedUrl[] = [];
    inputs.forEach((input, index) => {
      const result = tryNormalizeUrl(input, { sortQuery: this.#settings.sortQuery });
      if (result.ok) urls.push({ url: result.url, index });
      else rejected.push({ index, input, reason: result.reason, message: result.message });
    });
    return { urls, rejected };
  }

  async #admit(
    candidates: readonly { url: string; index: number }[],
    counts: { depth: number; rejected: RejectedUrl[]; outOfScope: number; tooDeep: number },
  ): Promise<AddResult> {
    // Same URL twice in one batch: keep the first.
    const unique = new Map<string, { url: string; group: string }>();
    let duplicate = 0;
    for (const { url } of candidates) {
      const fingerprint = urlFingerprint(url);
      if (unique.has(fingerprint) || this.#admitting.has(fingerprint)) duplicate += 1;
      else unique.set(fingerprint, { url, group: this.groupOf(url) });
    }
    if (unique.size === 0) return emptyResult({ ...counts, duplicate });
    for (const fingerprint of unique.keys()) this.#admitting.add(fingerprint);
    try {
      return await this.#reserveAndEnqueue(unique, counts, duplicate);
    } finally {
      for (const fingerprint of unique.keys()) this.#admitting.delete(fingerprint);
    }
  }

  async #reserveAndEnqueue(
    unique: ReadonlyMap<string, { url: string; group: string }>,
    counts: { depth: number; rejected: RejectedUrl[]; outOfScope: number; tooDeep: number },
    duplicatesSoFar: number,
  ): Promise<AddResult> {
    let duplicate = duplicatesSoFar;

    const entries = [...unique.entries()];
    const codes = await this.#seen.reserve(
      entries.map(([fingerprint, { group }]) => ({ fingerprint, group })),
      { maxPages: this.#settings.maxPages ?? 0, maxPagesPerGroup: this.#settings.maxPagesPerGroup ?? 0 },
    );

    const admitted = entries.filter((_, i) => codes[i] === ReserveCode.Admitted);
    duplicate += codes.filter((code) => code === ReserveCode.Duplicate).length;
    const overLimit = codes.filter((code) => code === ReserveCode.OverPageLimit || code === ReserveCode.OverGroupLimit).length;

    if (admitted.length > 0) {
      const delays = await this.#planner.plan(admitted.map(([, { group }]) => group));
      const options = crawlJobOptions(this.#settings.jobPolicy);
      await this.#queue.addBulk(
        admitted.map(([fingerprint, { url, group }], i) => ({
          name: CRAWL_JOB_NAME,
          data: { url, depth: counts.depth, group } satisfies CrawlJobData,
          // Lower depth first: the crawl proceeds breadth-first, so a URL is usually
          // first seen at its shortest distance from a seed.
          opts: { ...options, jobId: fingerprint, delay: delays[i] ?? 0, priority: Math.min(counts.depth + 1, MAX_PRIORITY) },
        })),
      );
      // Marked only after the jobs exist: see SeenSet.reserve.
      await this.#seen.mark(admitted.map(([fingerprint]) => fingerprint));
    }
    return {
      accepted: admitted.length,
      duplicate,
      overLimit,
      outOfScope: counts.outOfScope,
      tooDeep: counts.tooDeep,
      rejected: counts.rejected,
      acceptedUrls: admitted.map(([, { url }]) => url),
    };
  }

  /** The politeness group of a normalised URL: a matching group rule, else its host or domain. */
  groupOf(url: string): string {
    return politenessGroupOf(url, this.#settings);
  }

  async #scopeFilter(): Promise<(url: string) => boolean> {
    const now = Date.now();
    if (this.#scope && now - this.#scope.loadedAt < SCOPE_REFRESH_MS) return this.#scope.filter;
    const anchorCount = await this.#redis.scard(this.#keys.scopeAnchors);
    if (this.#scope?.anchors === anchorCount) {
      this.#scope.loadedAt = now;
      return this.#scope.filter;
    }
    const anchors = await this.#redis.smembers(this.#keys.scopeAnchors);
    const filter = this.scopeAround(anchors);
    this.#scope = { filter, anchors: anchors.length, loadedAt: now };
    return filter;
  }
}

function emptyResult(partial: Partial<AddResult>): AddResult {
  return { accepted: 0, duplicate: 0, outOfScope: 0, tooDeep: 0, overLimit: 0, rejected: [], acceptedUrls: [], ...partial };
}
