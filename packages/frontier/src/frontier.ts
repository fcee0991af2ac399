import type { CrawlJobData, CrawlJobPolicy, CrawlQueue } from '@crawlq/queue';
import { createScopeFilter, normalizeUrl, politenessGroupOf, tryNormalizeUrl, urlFingerprint, type GroupBy, type GroupRule, type ScopeMode } from '@crawlq/urls';
import { shardOfGroup, type RedisClient } from '@crawlq/redis';
import { Backlog, type BacklogPacer, type ReleaseOptions, type ReleaseResult, type RequeueRequest, type ContinueRequest } from './backlog.js';
import { grantPagesScript } from './lua/admit.js';
import { ReserveCode } from './lua/seen-script-status.js';
import { frontierKeys, type FrontierKeys } from './keys.js';
import { KnownSeen } from './known-seen.js';
import type { SeenSetMode } from './seen-set-mode.js';
import { SeenSet, type BacklogPlace } from './seen-set.js';
import { recordShardCount } from './shard-layout.js';
import { FrontierArgumentError, FrontierError } from './errors.js';
import { MAX_BACKLOG_PRIORITY } from './lua/backlog-lua.js';
import { RevisitSchedule } from './revisit/revisit-schedule.js';

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
  /**
   * URLs the crawl is sized for: sets the revisit schedule's bucket count
   * (fixed for the crawl, like the seen-set's geometry).
   * @default 10,000,000
   */
  readonly expectedUrls?: number | undefined;
}

/** One shard of a crawl (see `shardNamespaces` in @crawlq/redis): its keyspace, crawl queue and limiter. */
export interface FrontierShard {
  readonly namespace: string;
  readonly queue: CrawlQueue;
  readonly pacer: BacklogPacer;
}

export interface FrontierOptions {
  readonly redis: RedisClient;
  /** Where released URLs become jobs (a crawl of one shard). */
  readonly queue: CrawlQueue;
  /** Paces the release of each group's backlog (the group limiter; a crawl of one shard). */
  readonly pacer: BacklogPacer;
  readonly namespace: string;
  /**
   * The crawl's shards, in order, when it has more than one: each group's
   * seen-set slice, backlog and queue are its shard's, found by
   * `shardOfGroup`. `queue` and `pacer` are then not used.
   * @default one shard: the namespace itself, with `queue` and `pacer`
   */
  readonly shards?: readonly FrontierShard[];
  readonly settings: FrontierSettings;
  /**
   * How many URLs this process remembers as confirmed seen, to count links to
   * them as duplicates without asking Redis (see `KnownSeen`); 0 asks Redis
   * every time. About 150 bytes each, fingerprint included (9.9 MB of heap measured at 65,536).
   * @default DEFAULT_KNOWN_SEEN_CAPACITY
   */
  readonly knownSeenCapacity?: number;
}

/** 65,536 URLs: about 10 MB per process, enough for the pages a site links from everywhere and a recent window of the rest. */
export const DEFAULT_KNOWN_SEEN_CAPACITY = 65_536;

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

/** What happened to a page's links ({@link Frontier.addDiscovered}). */
export interface DiscoveredResult extends AddResult {
  /**
   * Normalised links inside the crawl's scope (enqueued, duplicate or over a
   * budget), in input order: the page's links as the crawl sees them. Empty
   * when they were too deep (not judged for scope).
   */
  readonly scopedUrls: readonly string[];
}

const SCOPE_REFRESH_MS = 2_000;
/** Grants a batch over its shard's grant asks for before it takes the answer (each race lost to another process costs one). */
const GRANT_ROUNDS = 4;

/**
 * The crawl frontier, in two stages. Stage one: URLs are normalised, scoped,
 * deduped and budgeted, and the survivors wait in per-group backlogs of
 * compact entries (one atomic step: admitted, marked seen, queued). Stage two
 * ({@link release}): a group's URLs become BullMQ jobs only when the group can
 * use them, so a job that exists is due. Seeds, discovered links and handed-over
 * redirects take the same path.
 */
export class Frontier {
  readonly #redis: RedisClient;
  readonly #namespace: string;
  readonly #keys: FrontierKeys;
  readonly #settings: FrontierSettings;
  readonly #shards: readonly { readonly seen: SeenSet; readonly backlog: Backlog }[];
  readonly #knownSeen: KnownSeen;
  /** Groups with a job in hand here that will ask to go on (see holdBacklog), and how many such jobs each has. */
  readonly #held = new Map<string, number>();
  /** The continuous crawl's schedule of known URLs (used only with a revisit policy). */
  readonly revisits: RevisitSchedule;
  /** Shards this process found no --max-pages left to grant to. */
  readonly #budgetSpent = new Set<number>();
  #layoutRecorded: Promise<void> | undefined;
  #scope: { filter: (url: string) => boolean; anchors: number; loadedAt: number } | undefined;

  constructor(options: FrontierOptions) {
    this.#redis = options.redis;
    this.#namespace = options.namespace;
    this.#keys = frontierKeys(options.namespace);
    this.#settings = options.settings;
    const shards = options.shards ?? [{ namespace: options.namespace, queue: options.queue, pacer: options.pacer }];
    if (shards.length === 0) throw new RangeError('a frontier needs at least one shard');
    const mode = seenSetModePerShard(options.settings.seenSet, shards.length);
    this.#shards = shards.map((shard) => ({
      seen: new SeenSet({ redis: options.redis, namespace: shard.namespace, mode }),
      backlog: new Backlog({ redis: options.redis, queue: shard.queue, pacer: shard.pacer, namespace: shard.namespace, jobPolicy: options.settings.jobPolicy }),
    }));
    this.#knownSeen = new KnownSeen(options.knownSeenCapacity ?? DEFAULT_KNOWN_SEEN_CAPACITY);
    this.revisits = new RevisitSchedule({
      redis: options.redis,
      namespaces: shards.map(({ namespace }) => namespace),
      expectedUrls: options.settings.expectedUrls ?? 10_000_000,
      groupOf: (url) => this.groupOf(url),
    });
  }

  /**
   * Moves due URLs from the backlogs into the crawl queue (stage two). Any
   * process may call it, as often as it likes: each URL is released once.
   */
  async release(options: ReleaseOptions): Promise<ReleaseResult> {
    // Each shard has a queue of its own, so each gets the whole room.
    const readyTargetShare = Math.ceil(options.readyTarget / this.#shards.length);
    const results = await Promise.all(this.#shards.map(({ backlog }) => backlog.release({ readyTargetShare, ...options })));
    return {
      released: results.reduce((sum, { released }) => sum + released, 0),
      jobs: results.reduce((sum, { jobs }) => sum + jobs, 0),
      releasers: Math.max(1, ...results.map(({ releasers }) => releasers)),
      saturated: results.some(({ saturated }) => saturated),
      nextDueMs: earliest(results.map(({ nextDueMs }) => nextDueMs)),
    };
  }

  /**
   * Hands URLs a job carried and will not fetch back to the front of their
   * group's backlog, atomically with the job's change: `data`, the one URL
   * left to it (it goes on as a job of that URL alone: retries, deferrals and
   * dead letters as any), or `progress`, how many of its URLs are handled
   * (all of them: a retry of the job then fetches nothing). False, with
   * nothing changed, when `token` no longer holds the job's lock.
   */
  async requeue(request: RequeueRequest): Promise<boolean> {
    return this.#shardAt(shardOfGroup(request.group, this.#shards.length)).backlog.requeue(request);
  }

  /**
   * A job done with its URLs goes on with its group's next ones: they move
   * from the group's backlog into the job's data, atomically, with the start
   * slots a release would give them now, and the job's progress starts again
   * at the first. Resolves with the job's new data, or undefined (nothing
   * changed: the job completes) when the caller no longer holds the job's
   * lock, jobs wait in the queue for a worker (more than `maxWaiting`), or a
   * release would not move the group's URLs now (not due, paused, in its slow
   * start, or paced by more than one job at a time).
   */
  async continueJob(request: ContinueRequest): Promise<CrawlJobData | undefined> {
    return this.#shardAt(shardOfGroup(request.group, this.#shards.length)).backlog.continueJob(request);
  }

  /**
   * A job in hand that will ask to go on with its group's next URLs (see
   * continueJob) holds its group's backlog until it ends: the links its pages
   * add there are due for a release only BACKLOG_HOLD_MS later, so the job
   * takes them itself instead of a release making each a job of its own. A
   * job that does not go on after all gives them to the release at once (the
   * continuation script does, when it declines); one whose worker dies leaves
   * them to the release after the hold. Call the function returned when the
   * job ends. Undefined (nothing held, and no use asking continueJob) for a
   * group whose pace was not one job's when a job of it last asked.
   */
  holdBacklog(group: string): (() => void) | undefined {
    if (!this.#shardAt(shardOfGroup(group, this.#shards.length)).backlog.mayContinue(group)) return undefined;
    this.#held.set(group, (this.#held.get(group) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.#held.get(group) ?? 1) - 1;
      if (left > 0) this.#held.set(group, left);
      else this.#held.delete(group);
    };
  }

  /** URLs admitted and not yet released as jobs. */
  async backlogSize(): Promise<number> {
    const sizes = await Promise.all(this.#shards.map(({ backlog }) => backlog.size()));
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  /** The shard of a normalised URL's group. */
  #shardOf(url: string): { readonly seen: SeenSet; readonly backlog: Backlog } {
    return this.#shardAt(shardOfGroup(this.groupOf(url), this.#shards.length));
  }

  #shardAt(index: number): { readonly seen: SeenSet; readonly backlog: Backlog } {
    const shard = this.#shards[index];
    if (shard === undefined) throw new RangeError(`no shard ${index} in a crawl of ${this.#shards.length}`);
    return shard;
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
    const normalised = normalizeUrl(url, { sortQuery: this.#settings.sortQuery });
    const fingerprint = urlFingerprint(normalised);
    if (owner !== undefined && owner === fingerprint) return true;
    return this.#shardOf(normalised).seen.claim(fingerprint, owner);
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
    // Claimed before it is queued: if this process dies in between, the
    // redirected job is retried and claims again as the same owner.
    const { seen } = this.#shardOf(normalised);
    await this.#recordLayout();
    if (!(await seen.claim(fingerprint, options.owner))) return 'seen';
    await seen.pushClaimed({ fingerprint, group: this.groupOf(normalised), url: normalised }, options);
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

  /**
   * Links found on a page at `parentDepth`; out-of-scope and too-deep ones are
   * counted, not enqueued. `priority` (an integer, -1,000 to 1,000, default 0):
   * within each group's backlog, URLs of a higher priority are released before
   * lower ones, whatever their depth; FIFO within a priority and depth.
   */
  async addDiscovered(links: readonly string[], parentDepth: number, options: { readonly priority?: number } = {}): Promise<DiscoveredResult> {
    const depth = parentDepth + 1;
    const { urls, rejected } = this.#normalise(links);
    if (depth > this.#settings.maxDepth) {
      return { ...emptyResult({ rejected, tooDeep: urls.length }), scopedUrls: [] };
    }
    const inScope = await this.#scopeFilter();
    const kept = urls.filter(({ url }) => inScope(url));
    const result = await this.#admit(kept, { depth, priority: checkedPriority(options.priority), rejected, outOfScope: urls.length - kept.length, tooDeep: 0 });
    return { ...result, scopedUrls: kept.map(({ url }) => url) };
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
    counts: { depth: number; priority?: number; rejected: RejectedUrl[]; outOfScope: number; tooDeep: number },
  ): Promise<AddResult> {
    // Same URL twice in one batch: keep the first. A URL Redis has confirmed seen before is a duplicate without asking again.
    const unique = new Map<string, { fingerprint: string; url: string; group: string }>();
    let duplicate = 0;
    for (const { url } of candidates) {
      const fingerprint = urlFingerprint(url);
      if (unique.has(fingerprint) || this.#knownSeen.has(fingerprint)) duplicate += 1;
      else unique.set(fingerprint, { fingerprint, url, group: this.groupOf(url) });
    }
    if (unique.size === 0) return emptyResult({ ...counts, duplicate });
    const entries = [...unique.values()];
    const codes = await this.#admitInShards(entries, { depth: counts.depth, priority: counts.priority ?? 0, held: this.#held });
    entries.forEach(({ fingerprint }, i) => {
      if (codes[i] === ReserveCode.Admitted || codes[i] === ReserveCode.Duplicate) this.#knownSeen.add(fingerprint);
    });
    const admitted = entries.filter((_, i) => codes[i] === ReserveCode.Admitted);
    duplicate += codes.filter((code) => code === ReserveCode.Duplicate).length;
    return {
      accepted: admitted.length,
      duplicate,
      overLimit: codes.filter((code) => code === ReserveCode.OverPageLimit || code === ReserveCode.OverGroupLimit).length,
      outOfScope: counts.outOfScope,
      tooDeep: counts.tooDeep,
      rejected: counts.rejected,
      acceptedUrls: admitted.map(({ url }) => url),
    };
  }

  /** Each shard admits its own URLs (one script call per shard with any); the codes come back in `entries`' order. */
  async #admitInShards(entries: readonly { fingerprint: string; url: string; group: string }[], at: BacklogPlace): Promise<ReserveCode[]> {
    const budgets = { maxPages: this.#settings.maxPages ?? 0, maxPagesPerGroup: this.#settings.maxPagesPerGroup ?? 0 };
    const [only] = this.#shards;
    if (this.#shards.length === 1 && only) return only.seen.admit(entries, budgets, at);
    await this.#recordLayout();
    const byShard = new Map<number, { index: number; entry: (typeof entries)[number] }[]>();
    entries.forEach((entry, index) => {
      const shard = shardOfGroup(entry.group, this.#shards.length);
      const items = byShard.get(shard);
      if (items) items.push({ index, entry });
      else byShard.set(shard, [{ index, entry }]);
    });
    const codes: ReserveCode[] = new Array<ReserveCode>(entries.length);
    await Promise.all(
      [...byShard].map(async ([shard, items]) => {
        const shardEntries = items.map(({ entry }) => entry);
        const replies = budgets.maxPages > 0 ? await this.#admitWithinGrant(shard, shardEntries, at) : await this.#shardAt(shard).seen.admit(shardEntries, budgets, at);
        items.forEach(({ index }, i) => {
          const code = replies[i];
          if (code === undefined) throw new FrontierError(`admission in shard ${shard}: ${replies.length} answers for ${items.length} URLs`, { retryable: false });
          codes[index] = code;
        });
      }),
    );
    return codes;
  }

  /**
   * A shard of a crawl with --max-pages admits against its grant of the
   * budget: its scripts reach only its own slot, so the crawl-wide count
   * lives in grants (see `grantPagesScript`). URLs over the grant ask the
   * crawl for as many more and try again while grants come (another process
   * may use a fresh grant first). The grants never exceed the budget; a shard
   * can be left holding a few pages of grant it found no new URL for, so a
   * sharded crawl may stop a few pages short of it, never over it.
   */
  async #admitWithinGrant(shard: number, entries: readonly { fingerprint: string; url: string; group: string }[], at: BacklogPlace): Promise<ReserveCode[]> {
    const { seen } = this.#shardAt(shard);
    const budgets = { maxPages: -1, maxPagesPerGroup: this.#settings.maxPagesPerGroup ?? 0 };
    const codes = await seen.admit(entries, budgets, at);
    for (let round = 0; round < GRANT_ROUNDS && !this.#budgetSpent.has(shard); round += 1) {
      const over = entries.flatMap((entry, i) => (codes[i] === ReserveCode.OverPageLimit ? [{ i, entry }] : []));
      if (over.length === 0) break;
      const { total, given } = await this.#grantPages(shard, over.length);
      // Nothing left to grant: once more with the shard's whole grant, which
      // holds one a process died before storing, then never again here.
      if (given === 0) this.#budgetSpent.add(shard);
      const again = await seen.admit(over.map(({ entry }) => entry), { ...budgets, granted: total }, at);
      over.forEach(({ i }, k) => {
        const code = again[k];
        if (code !== undefined) codes[i] = code;
      });
    }
    return codes;
  }

  async #grantPages(shard: number, wanted: number): Promise<{ total: number; given: number }> {
    let reply: unknown;
    try {
      reply = await grantPagesScript.run(this.#redis, [this.#keys.pageGrants], [shard, wanted, this.#settings.maxPages ?? 0]);
    } catch (error) {
      throw new FrontierError('granting --max-pages to a shard failed in Redis', { retryable: true, cause: error });
    }
    const [total, given] = Array.isArray(reply) ? reply.map(Number) : [];
    if (total === undefined || given === undefined || !Number.isFinite(total) || !Number.isFinite(given)) {
      throw new FrontierError(`granting --max-pages: unexpected script reply ${JSON.stringify(reply)}`, { retryable: false });
    }
    return { total, given };
  }

  /** Once per process, before the first URL lands in a shard: readers without a crawl definition learn the layout from it. */
  #recordLayout(): Promise<void> {
    if (this.#shards.length === 1) return Promise.resolve();
    this.#layoutRecorded ??= recordShardCount(this.#redis, this.#namespace, this.#shards.length).catch((error: unknown) => {
      this.#layoutRecorded = undefined;
      throw error;
    });
    return this.#layoutRecorded;
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

/** A Bloom filter per shard, each sized for its share of the crawl's URLs. */
function seenSetModePerShard(mode: SeenSetMode | undefined, shards: number): SeenSetMode | undefined {
  if (mode?.mode !== 'bloom' || shards <= 1) return mode;
  return { ...mode, expectedUrls: Math.ceil(mode.expectedUrls / shards) };
}

function emptyResult(partial: Partial<AddResult>): AddResult {
  return { accepted: 0, duplicate: 0, outOfScope: 0, tooDeep: 0, overLimit: 0, rejected: [], acceptedUrls: [], ...partial };
}

/** The smallest of the numbers given; undefined when there are none. */
function earliest(values: readonly (number | undefined)[]): number | undefined {
  const defined = values.filter((value): value is number => value !== undefined);
  return defined.length > 0 ? Math.min(...defined) : undefined;
}

/**
 * A priority for the backlog: an integer from -MAX_BACKLOG_PRIORITY to
 * MAX_BACKLOG_PRIORITY (0: none).
 * @throws FrontierArgumentError
 */
function checkedPriority(priority: number | undefined): number {
  if (priority === undefined) return 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > MAX_BACKLOG_PRIORITY) {
    throw new FrontierArgumentError(`priority: expected an integer from -${MAX_BACKLOG_PRIORITY} to ${MAX_BACKLOG_PRIORITY}, got ${String(priority)}`, 'priority');
  }
  return priority;
}
