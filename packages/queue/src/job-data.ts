/**
 * What a crawl job carries. Kept small: Redis memory per queued URL is a
 * budget (about 1 KB), and every byte is copied on each state move.
 */
export interface CrawlJobData {
  /** Normalised absolute URL (see `@crawlq/urls` normalizeUrl). */
  readonly url: string;
  /** Link distance from a seed; seeds are 0. */
  readonly depth: number;
  /** Politeness group (host or registrable domain) the URL belongs to. */
  readonly group: string;
  /**
   * When the job was first deferred because its group was paused (epoch ms).
   * Lets a worker dead-letter a job whose group stays blocked too long.
   */
  readonly blockedSince?: number;
  /**
   * Redirect hops that led here, when another job's redirect was handed over
   * as this job: the chain as a whole stays within --max-redirects.
   */
  readonly redirects?: number;
  /**
   * Its priority within its group's backlog, when a crawler's `enqueue` gave
   * one other than 0: a URL handed back to the backlog keeps its place.
   */
  readonly priority?: number;
  /**
   * The start slot the release step gave the job (Redis clock, epoch ms), when
   * its group's rate holds it back: the worker asks the gate only shortly
   * before, so the start is checked once (see the gate's near starts).
   */
  readonly due?: number;
  /** How far (ms) the group's starts ran behind its slots when this job was released: it asks that much later. */
  readonly lag?: number;
  /**
   * More URLs of the same group, fetched one after another after `url` by the
   * same worker: the release step packs a group's URLs into one job while its
   * backlog is long, so BullMQ's per-job work (add, wake, take, finish) is
   * shared by several pages. Absent on a job of one URL.
   */
  readonly batch?: readonly CrawlJobUnit[];
  /**
   * The first URL's fingerprint, when it is not the job's id: a job that went
   * on with more URLs of its group keeps its id (see the frontier's
   * `continueJob`). Absent: the job's id is its first URL's.
   */
  readonly id?: string;
}

/** One URL of a job: the job's own (`url`, ...) or one of its `batch`. */
export interface CrawlJobUnit {
  /** The URL's fingerprint: the id its job would have on its own, and its backlog entry's id. */
  readonly id: string;
  readonly url: string;
  readonly depth: number;
  readonly priority?: number;
  readonly redirects?: number;
  readonly due?: number;
  readonly lag?: number;
}

/** The URL, depth and the optional per-URL fields a job's data and its units share (those set only). */
function urlFields(source: Omit<CrawlJobUnit, 'id'>): Omit<CrawlJobUnit, 'id'> {
  const { url, depth, priority, redirects, due, lag } = source;
  return { url, depth, ...(priority === undefined ? {} : { priority }), ...(redirects === undefined ? {} : { redirects }), ...(due === undefined ? {} : { due }), ...(lag === undefined ? {} : { lag }) };
}

/** The URLs a job carries, in the order they are fetched; the first is the job's own (its id is the job's). */
export function crawlJobUnits(id: string, data: CrawlJobData): readonly CrawlJobUnit[] {
  const own: CrawlJobUnit = { id: data.id ?? id, ...urlFields(data) };
  return data.batch === undefined ? [own] : [own, ...data.batch];
}

/**
 * A job's data for one of its URLs alone: what the job becomes when that URL
 * is the one left to it. It names the URL's id when the job's data named its
 * first URL's (a job that went on: its id is another URL's).
 */
export function unitJobData(data: CrawlJobData, unit: CrawlJobUnit): CrawlJobData {
  const { batch: _batch, url: _url, depth: _depth, priority: _priority, redirects: _redirects, due: _due, lag: _lag, id, ...rest } = data;
  return { ...rest, ...urlFields(unit), ...(id === undefined ? {} : { id: unit.id }) };
}

/** Result summary a completed crawl job returns (the full record goes to the sink). */
export interface CrawlJobResult {
  readonly status: number;
  readonly links: number;
  readonly enqueued: number;
}
