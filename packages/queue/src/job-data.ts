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
   * The start slot the release step gave the job (Redis clock, epoch ms), when
   * its group's rate holds it back: the worker asks the gate only shortly
   * before, so the start is checked once (see the gate's near starts).
   */
  readonly due?: number;
  /** How far (ms) the group's starts ran behind its slots when this job was released: it asks that much later. */
  readonly lag?: number;
}

/** Result summary a completed crawl job returns (the full record goes to the sink). */
export interface CrawlJobResult {
  readonly status: number;
  readonly links: number;
  readonly enqueued: number;
}
