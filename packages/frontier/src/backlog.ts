import type { GroupLimiter } from '@crawlq/group-limiter';
import { ADAPTIVE_IMPLIED_CONCURRENCY } from '@crawlq/group-limiter';
import { crawlJobOptionsJson, crawlJobWriteKeys, crawlQueueKey, type CrawlCounts, type CrawlJobData, type CrawlJobPolicy, type CrawlJobUnit, type CrawlQueue } from '@crawlq/queue';
import type { RedisClient } from '@crawlq/redis';
import { releaseScript } from './lua/release.js';
import { requeueScript } from './lua/requeue.js';
import { continueJobScript } from './lua/continue-job.js';
import { FrontierError } from './errors.js';
import { frontierKeys, type FrontierKeys } from './keys.js';
import { readShardNamespaces } from './shard-layout.js';

/** The limiter's part in a release: it runs the script with each group's pacing state. */
export type BacklogPacer = Pick<GroupLimiter, 'runPaced'>;

/** How much one {@link Backlog.release} call may move. */
export interface ReleaseOptions {
  /** Jobs this call may release at most. */
  readonly room: number;
  /**
   * Waiting jobs the crawl queue may hold, from all releases of the fleet:
   * about what the workers can take before the next release.
   */
  readonly readyTarget: number;
  /**
   * Waiting jobs per group at most, whatever its concurrency cap: a group that
   * may run thousands at once still gets them a few at a time, since releases
   * run every few milliseconds while jobs go out.
   * @default 32
   */
  readonly maxReadyPerGroup?: number;
  /**
   * A group's first job runs alone, and the rest follow once it is done.
   * Off only where no worker takes the jobs (tests of the release itself).
   * @default true
   */
  readonly slowStart?: boolean;
  /**
   * URLs one job may carry (see MAX_URLS_PER_JOB); 1: a job per URL.
   * @default 16
   */
  readonly maxUrlsPerJob?: number;
  /**
   * This shard's share of `readyTarget`, which sets the URLs per job (the
   * backlog over it, up to maxUrlsPerJob): the fleet's workers take from every
   * shard, so each shard's backlog is set against its part of what they run.
   * @default readyTarget
   */
  readonly readyTargetShare?: number;
  /**
   * The calling process, when it releases on a loop: it is recorded as one of
   * the fleet's releasers, and the result says how many there are.
   */
  readonly releaser?: string;
}

export interface ReleaseResult {
  /** URLs moved out of the backlogs. */
  readonly released: number;
  /** Jobs they became (a job carries one URL or several). */
  readonly jobs: number;
  /** Processes that released in the last RELEASER_TTL_MS, the caller included (1 without `releaser`). */
  readonly releasers: number;
  /** More was ready to go, held back only by `maxReadyPerGroup` or the queue's room (not a pace or a cap): release again soon. */
  readonly saturated: boolean;
  /**
   * Milliseconds until the next group is due for a release (0: one is due
   * now); undefined when no group has URLs waiting. A release loop may sleep
   * that long: a release before then finds nothing to do.
   */
  readonly nextDueMs: number | undefined;
}

/** A job's URLs going back to their group's backlog (see {@link Frontier.requeue}). */
export interface RequeueRequest {
  readonly group: string;
  /** The job that carried them, and the caller's lock on it. */
  readonly jobId: string;
  readonly token: string;
  /** Back to the front of the backlog, in this order. */
  readonly units: readonly CrawlJobUnit[];
  /** The job's data from now on: the one URL left to it. */
  readonly data?: CrawlJobData;
  /** The job's progress from now on: how many of its URLs are handled. */
  readonly progress?: number;
}

/** A job done with its URLs asking for its group's next ones (see {@link Frontier.continueJob}). */
export interface ContinueRequest {
  readonly group: string;
  /** The job, and the caller's lock on it. */
  readonly jobId: string;
  readonly token: string;
  /**
   * Jobs the crawl queue may hold waiting for a worker and still let this one
   * go on: with more, going on would make a waiting job (another group's) wait.
   */
  readonly maxWaiting: number;
  /** As {@link ReleaseOptions.slowStart}. @default true */
  readonly slowStart?: boolean;
  /** As {@link ReleaseOptions.maxUrlsPerJob}. */
  readonly maxUrlsPerJob?: number;
  /** As {@link ReleaseOptions.maxReadyPerGroup}. */
  readonly maxReadyPerGroup?: number;
}

/** A URL's backlog bucket, as `lua/backlog.lua`'s backlog_bucket names it. */
function backlogBucket(depth: number, priority: number | undefined): string {
  return priority === undefined || priority === 0 ? String(depth) : `${depth}p${priority}`;
}

/** How long a group whose pace one job cannot keep is not asked for (its hold time or pace may change). */
const UNPACED_FOR_MS = 10_000;
/** Groups remembered as such at most. */
const UNPACED_KEPT = 10_000;

/** A releaser that has not released for this long no longer counts. */
export const RELEASER_TTL_MS = 3_000;

/**
 * A job becomes due up to this long before its group's slot: below the gate's
 * in-process wait (MAX_INLINE_WAIT_MS), so the gate admits a released job
 * with a short sleep instead of deferring it.
 */
export const RELEASE_WINDOW_MS = 400;
/** Groups one release call considers (those waiting longest first). */
const GROUPS_PER_RELEASE = 200;
/**
 * A group is picked for a release this long before its time (Redis' clock,
 * read with the groups): a release loop that wakes a little early still
 * finds it due instead of sleeping another round.
 */
const DUE_SLACK_MS = 20;
const MAX_READY_PER_GROUP = 32;
/**
 * URLs one job carries at most. BullMQ's work per job (add, wake, take,
 * finish: about 34 commands and a round trip or two) is shared by them; a
 * worker killed mid-job fetches again only the URL it had in hand (the job's
 * progress says which were done).
 */
export const MAX_URLS_PER_JOB = 32;
/** BullMQ accepts priorities up to 2^21. */
export const MAX_PRIORITY = 2_097_152;

/**
 * Stage two of the crawl frontier, the release step (see `releaseScript`):
 * whoever calls it (every worker does, on a loop) moves due URLs from the
 * groups' backlogs into the crawl queue, atomically, no faster than the gate
 * will admit them.
 */
export class Backlog {
  readonly #redis: RedisClient;
  readonly #pacer: BacklogPacer;
  readonly #keys: FrontierKeys;
  readonly #queueKeys: readonly string[];
  readonly #prioritizedKey: string;
  /**
   * Groups whose pace is not one job's (no rate, one too fast to bind, slots
   * further apart than the window), until when (epoch ms): their jobs neither
   * hold their links nor ask to go on, which would cost a round trip per job
   * for nothing.
   */
  readonly #unpaced = new Map<string, number>();
  readonly #jobPrefix: string;
  readonly #options: string;

  constructor(options: { readonly redis: RedisClient; readonly queue: CrawlQueue; readonly pacer: BacklogPacer; readonly namespace: string; readonly jobPolicy: CrawlJobPolicy }) {
    this.#redis = options.redis;
    this.#pacer = options.pacer;
    this.#keys = frontierKeys(options.namespace);
    const { queueKeys, jobPrefix } = crawlJobWriteKeys(options.queue);
    this.#queueKeys = queueKeys;
    // BullMQ's addPrioritizedJob keys: marker, meta, id, prioritized, ...
    this.#prioritizedKey = queueKeys[3] ?? '';
    this.#jobPrefix = jobPrefix;
    this.#options = crawlJobOptionsJson(options.jobPolicy);
  }

  /**
   * Releases what is due now (see {@link ReleaseOptions}): one round trip to
   * read the groups that wait longest, and when one of them is due, one more
   * to run the release script over them.
   */
  async release(options: ReleaseOptions): Promise<ReleaseResult> {
    const { waiting, releasers, now } = await this.#readDueGroups(options.releaser);
    // Each group's score is when a release may next move some of its URLs (the
    // release script sets it: its next jobs' first slot or its pause's end, less
    // the window; else now).
    const due: string[] = [];
    for (let i = 0; i + 1 < waiting.length; i += 2) {
      if (Number(waiting[i + 1]) <= now + DUE_SLACK_MS) due.push(waiting[i] ?? '');
    }
    // The groups come lowest score first: the first is the next due.
    const firstScore = waiting[1];
    const nextDueMs = due.length > 0 ? 0 : firstScore === undefined ? undefined : Math.ceil(Number(firstScore) - now);
    if (due.length === 0 || options.room <= 0) return { released: 0, jobs: 0, releasers, saturated: false, nextDueMs };
    const reply = await this.#pacer.runPaced(releaseScript, due, {
      operation: 'release',
      keys: [this.#keys.backlogCount, ...this.#queueKeys],
      args: [this.#keys.backlog, this.#jobPrefix, this.#options, RELEASE_WINDOW_MS, options.room, options.readyTarget, ADAPTIVE_IMPLIED_CONCURRENCY, MAX_PRIORITY, options.maxReadyPerGroup ?? MAX_READY_PER_GROUP, options.slowStart === false ? '0' : '1', options.maxUrlsPerJob ?? MAX_URLS_PER_JOB, Math.max(1, options.readyTargetShare ?? options.readyTarget)],
    });
    const released = Number(reply[0]);
    if (!Number.isInteger(released)) {
      throw new FrontierError(`backlog release: unexpected script reply ${JSON.stringify(reply).slice(0, 200)}`, { retryable: false });
    }
    const next = Number(reply[3]);
    return { released, jobs: Number(reply[2]), releasers, saturated: Number(reply[1]) === 1, nextDueMs: next >= 0 ? next : undefined };
  }

  /** See {@link Frontier.requeue}. */
  async requeue(request: RequeueRequest): Promise<boolean> {
    const jobKey = `${this.#jobPrefix}${request.jobId}`;
    const args: (string | number)[] = [this.#keys.backlog, request.group, request.token, request.data === undefined ? '' : JSON.stringify(request.data), request.progress ?? '', RELEASE_WINDOW_MS];
    for (const unit of request.units) args.push(backlogBucket(unit.depth, unit.priority), unit.id, unit.url, unit.redirects ?? 0, unit.due ?? '');
    const reply = await requeueScript.run(this.#redis, [this.#keys.backlogCount, jobKey, `${jobKey}:lock`], args);
    return Number(reply) === 1;
  }

  /** False for a group whose pace one job could not keep when it last asked (see {@link continueJob}): no use asking again yet. */
  mayContinue(group: string): boolean {
    const unpacedUntil = this.#unpaced.get(group);
    if (unpacedUntil === undefined) return true;
    if (Date.now() < unpacedUntil) return false;
    this.#unpaced.delete(group);
    return true;
  }

  /** See {@link Frontier.continueJob}. */
  async continueJob(request: ContinueRequest): Promise<CrawlJobData | undefined> {
    const jobKey = `${this.#jobPrefix}${request.jobId}`;
    const reply = await this.#pacer.runPaced(continueJobScript, [request.group], {
      operation: 'continue',
      keys: [this.#keys.backlogCount, jobKey, `${jobKey}:lock`, this.#prioritizedKey],
      args: [
        this.#keys.backlog,
        request.token,
        RELEASE_WINDOW_MS,
        request.maxUrlsPerJob ?? MAX_URLS_PER_JOB,
        request.maxWaiting,
        request.slowStart === false ? '0' : '1',
        request.maxReadyPerGroup ?? MAX_READY_PER_GROUP,
      ],
    });
    const taken = Number(reply[0]);
    if (!Number.isInteger(taken) || taken < 0) throw new FrontierError(`job continuation: unexpected script reply ${JSON.stringify(reply).slice(0, 200)}`, { retryable: false });
    if (Number(reply[2]) === 1) {
      // A bounded memory of groups not to ask for: a crawl of millions of hosts forgets them all at once.
      if (this.#unpaced.size >= UNPACED_KEPT) this.#unpaced.clear();
      this.#unpaced.set(request.group, Date.now() + UNPACED_FOR_MS);
    }
    return taken === 0 ? undefined : (JSON.parse(String(reply[1])) as CrawlJobData);
  }

  /**
   * The groups due first, with their scores, and Redis' clock (which the
   * scores are in); with a releaser, it is recorded in the same round trip.
   */
  async #readDueGroups(releaser: string | undefined): Promise<{ waiting: string[]; releasers: number; now: number }> {
    const read = this.#redis.multi().time().zrange(this.#keys.backlogGroups, 0, GROUPS_PER_RELEASE - 1, 'WITHSCORES');
    if (releaser !== undefined) {
      const now = Date.now();
      read
        .zadd(this.#keys.releasers, now, releaser)
        .zremrangebyscore(this.#keys.releasers, '-inf', now - RELEASER_TTL_MS)
        .zcard(this.#keys.releasers)
        .pexpire(this.#keys.releasers, RELEASER_TTL_MS * 2);
    }
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await read.exec();
    } catch (error) {
      throw new FrontierError('backlog release failed in Redis', { retryable: true, cause: error });
    }
    const failed = replies?.find(([error]) => error !== null)?.[0];
    if (replies === null || failed) throw new FrontierError('backlog release failed in Redis', { retryable: true, cause: failed ?? undefined });
    const [seconds, micros] = (replies[0]?.[1] ?? []) as [string, string];
    const waiting = replies[1]?.[1];
    const count = releaser === undefined ? 1 : Number(replies[4]?.[1]);
    return {
      waiting: Array.isArray(waiting) ? waiting.map(String) : [],
      releasers: Number.isInteger(count) && count > 0 ? count : 1,
      now: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    };
  }

  /** URLs admitted and not yet released as jobs. */
  size(): Promise<number> {
    return readBacklogSize(this.#redis, this.#keys);
  }

}

/** URLs a crawl has admitted and not yet released as jobs (for status readers without a frontier). */
export async function readBacklogSize(redis: RedisClient, keys: Pick<FrontierKeys, 'backlogCount'> | string): Promise<number> {
  const key = typeof keys === 'string' ? frontierKeys(keys).backlogCount : keys.backlogCount;
  return Math.max(0, Number((await redis.get(key)) ?? 0));
}

/** One URL waiting in a backlog, as {@link readBacklogEntries} reports it. */
export interface BacklogEntry {
  readonly url: string;
  readonly group: string;
  readonly depth: number;
  /** Only when not 0: its priority within the group (see `lua/backlog.lua`). */
  readonly priority?: number;
  /** Redirect hops that led to it (a redirect handed over as a job of its own). */
  readonly redirects: number;
}

/**
 * Every URL waiting in a crawl's backlogs, group by group, in the order each group's are released (highest priority, then lowest depth first).
 * Reads every list: for inspecting small crawls and tests, not for a crawl of millions.
 */
export async function readBacklogEntries(redis: RedisClient, namespace: string): Promise<BacklogEntry[]> {
  const keys = frontierKeys(namespace);
  const entries: BacklogEntry[] = [];
  for (const group of await redis.zrange(keys.backlogGroups, 0, -1)) {
    for (const bucket of await redis.zrange(`${keys.backlog}d:${group}`, 0, -1)) {
      const [depth = '0', priority] = bucket.split('p');
      for (const entry of await redis.lrange(`${keys.backlog}q:${group}:${bucket}`, 0, -1)) {
        entries.push({ group, depth: Number(depth), ...(priority === undefined ? {} : { priority: Number(priority) }), ...decodeEntry(entry) });
      }
    }
  }
  return entries;
}

/** An entry is the job id (23 characters), then `>hops ` for a handed-over redirect, then the URL (see `lua/backlog.lua`). */
function decodeEntry(entry: string): { url: string; redirects: number } {
  const rest = entry.slice(23);
  if (!rest.startsWith('>')) return { url: rest, redirects: 0 };
  const space = rest.indexOf(' ');
  return { url: rest.slice(space + 1), redirects: Number(rest.slice(1, space)) };
}

/** A crawl's counts in one atomic read: its backlog and its queue's jobs by state. */
export interface CrawlProgress extends CrawlCounts {
  /** URLs admitted and waiting in their groups' backlogs (not yet jobs). */
  readonly backlog: number;
  /** Of the delayed jobs (deferred by the gate, or waiting for a retry), those due within `dueWithinMs` (DUE_WINDOW_MS by default). */
  readonly delayedDue: number;
  /**
   * URLs ever marked seen (admitted, or claimed as a redirect's target), over
   * all shards. It only grows, and grows in the same step that creates work:
   * two reads with nothing left and the same count prove no work appeared
   * between them, even when shards are read one after another.
   */
  readonly seen: number;
}

/**
 * How far ahead a delayed job (deferred by the gate, or waiting for a retry)
 * counts as due: only the jobs whose time comes within this window are work an
 * extra worker could take now.
 */
export const DUE_WINDOW_MS = 60_000;

/** BullMQ stores a delayed job's score as `timestamp * 0x1000 + counter` (getDelayedScore.lua). */
const DELAYED_SCORE_FACTOR = 0x1000;

/**
 * Reads the backlog and the queue's counts of each shard in one MULTI, so a
 * URL moving from the backlog into the queue, or a job adding links to the
 * backlog as it finishes, is counted somewhere: separate reads could see
 * neither and call a crawl done that is not. Shards are read one MULTI each,
 * so a job in one shard can admit links into another between two reads: a
 * caller deciding the crawl is over compares `seen` over two reads. Every
 * reader of a crawl's progress (`status`, the end of `crawl`, the dashboard,
 * the metrics) goes through here.
 */
export async function readCrawlProgress(
  redis: RedisClient,
  namespace: string,
  options: { dueWithinMs?: number; /** The crawl's shard keyspaces, when the caller has just read them (`readShardNamespaces`). */ shards?: readonly string[] } = {},
): Promise<CrawlProgress> {
  const layout = options.shards ?? (await readShardNamespaces(redis, namespace));
  const shards = await Promise.all(layout.map((shard) => readShardProgress(redis, shard, options)));
  const total = (name: keyof CrawlProgress): number => shards.reduce((sum, progress) => sum + progress[name], 0);
  return {
    backlog: total('backlog'),
    waiting: total('waiting'),
    delayed: total('delayed'),
    active: total('active'),
    failed: total('failed'),
    delayedDue: total('delayedDue'),
    seen: total('seen'),
  };
}

async function readShardProgress(redis: RedisClient, namespace: string, options: { dueWithinMs?: number }): Promise<CrawlProgress> {
  const key = (name: string): string => crawlQueueKey(namespace, name);
  const dueScore = (Date.now() + (options.dueWithinMs ?? DUE_WINDOW_MS)) * DELAYED_SCORE_FACTOR + (DELAYED_SCORE_FACTOR - 1);
  const replies = await redis
    .multi()
    .get(frontierKeys(namespace).backlogCount)
    .llen(key('wait'))
    .llen(key('paused'))
    .zcard(key('prioritized'))
    .zcard(key('waiting-children'))
    .zcard(key('delayed'))
    .llen(key('active'))
    .zcard(key('failed'))
    .zcount(key('delayed'), '-inf', dueScore)
    .hget(frontierKeys(namespace).seen, 'count')
    .exec();
  if (replies === null) throw new FrontierError('Redis discarded the crawl-progress read', { retryable: true });
  const [backlog, wait, paused, prioritized, children, delayed, active, failed, delayedDue, seen] = replies.map(([error, value]) => {
    if (error) throw new FrontierError('crawl-progress read failed in Redis', { retryable: true, cause: error });
    return Math.max(0, Number(value ?? 0));
  }) as [number, number, number, number, number, number, number, number, number, number];
  return { backlog, waiting: wait + paused + prioritized + children, delayed, active, failed, delayedDue, seen };
}
