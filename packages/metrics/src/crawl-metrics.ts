import { Counter, Histogram, Registry } from 'prom-client';
import { registerProcessMetrics } from './process-metrics.js';

/** What a finished page tells the metrics; the crawler's page record has these fields. */
export interface PageObservation {
  readonly status: number;
  readonly bytes: number;
  /** got's own retries inside the attempt. */
  readonly retries: number;
  readonly timings: { readonly waitMs: number; readonly fetchMs: number };
}

/**
 * Gate denial reasons a label may take. Anything else is counted as `other`,
 * so no caller can grow the label set.
 */
export const DENIAL_REASONS = ['rate', 'global-rate', 'concurrency', 'paused', 'server-rate', 'server-concurrency', 'server-lookup', 'robots', 'other'] as const;

/**
 * The gate level a denial came from (`crawlq_gate_deferred_seconds{level}`):
 * the group's own limits, its server's, the crawl-wide cap, or robots.txt.
 */
export const GATE_LEVELS = ['group', 'server', 'crawl', 'robots'] as const;

function levelOf(reason: string): (typeof GATE_LEVELS)[number] {
  if (reason.startsWith('server-')) return 'server';
  if (reason === 'global-rate') return 'crawl';
  if (reason === 'robots') return 'robots';
  return 'group';
}

/**
 * Why an adaptive pace changed, as a label: the cut's signal class, or
 * `recovered` for a return to full pace; anything else is `other`.
 */
export const PACE_CHANGE_REASONS = ['latency', '5xx', '429', 'timeout', 'network', 'recovered', 'other'] as const;

/** What a change of a group's adaptive pace tells the metrics (the limiter's PaceChange has these fields). */
export interface PaceChangeObservation {
  readonly direction: 'down' | 'up';
  readonly cause: string;
}

/**
 * Dead-letter reasons are crawlq's own codes (classify-failure), a short fixed
 * list; a code that does not look like one is counted as `other`.
 */
const REASON_CODE = /^[a-z][a-z0-9-]{0,40}$/;

/** This process's counters, as plain numbers for the stats line. */
export interface CrawlCounters {
  readonly pages: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly retries: number;
  readonly deadLetters: number;
}

/**
 * The per-process crawl metrics. Labels are bounded: status class (1xx..5xx,
 * `none` for a record without a response), denial and dead-letter reason
 * codes. Never a URL or a host.
 */
export class CrawlMetrics {
  readonly registry: Registry;
  readonly #pages: Counter<'status_class'>;
  readonly #bytes: Counter;
  readonly #retries: Counter;
  readonly #deadLetters: Counter<'reason'>;
  readonly #denials: Counter<'reason'>;
  readonly #paceChanges: Counter<'direction' | 'reason'>;
  readonly #fetch: Histogram;
  readonly #gateWait: Histogram;
  readonly #deferredWait: Histogram<'level'>;
  readonly #counts = { pages: 0, retries: 0, deadLetters: 0, statuses: {} as Record<string, number> };

  constructor(options: { registry?: Registry; processMetrics?: boolean } = {}) {
    this.registry = options.registry ?? new Registry();
    if (options.processMetrics !== false) registerProcessMetrics(this.registry);
    const registers = [this.registry];
    this.#pages = new Counter({ name: 'crawlq_pages_total', help: 'Pages fetched and recorded, by HTTP status class', labelNames: ['status_class'], registers });
    this.#bytes = new Counter({ name: 'crawlq_response_bytes_total', help: 'Response body bytes received (after decompression)', registers });
    this.#retries = new Counter({ name: 'crawlq_retries_total', help: 'Requests repeated: got retries inside an attempt plus failed queue attempts that will be retried', registers });
    this.#deadLetters = new Counter({ name: 'crawlq_dead_letters_total', help: 'Jobs this process moved to the dead-letter queue, by reason', labelNames: ['reason'], registers });
    this.#denials = new Counter({ name: 'crawlq_gate_denials_total', help: 'Jobs deferred by the group gate or a robots.txt wait, by reason', labelNames: ['reason'], registers });
    this.#paceChanges = new Counter({
      name: 'crawlq_pace_changes_total',
      help: 'Adaptive pace changes this process reported: down = a congestion signal halved a group\'s pace (reason: its class), up = a group back at full pace',
      labelNames: ['direction', 'reason'],
      registers,
    });
    this.#fetch = new Histogram({
      name: 'crawlq_fetch_duration_seconds',
      help: 'Time from the request to the whole body, retries included',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#gateWait = new Histogram({
      name: 'crawlq_gate_wait_seconds',
      help: 'Time a job waited in-process for its group gate before its request',
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#deferredWait = new Histogram({
      name: 'crawlq_gate_deferred_seconds',
      help: 'How long the gate sent a job away for when it denied it, by the level that denied it: group, server, crawl (--global-rate) or robots',
      labelNames: ['level'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    // Zero series up front: a rate() over a counter that appears late misses its first step.
    // labels() alone creates no series in prom-client 15: inc(0) does.
    for (const statusClass of ['2xx', '3xx', '4xx', '5xx']) this.#pages.labels(statusClass).inc(0);
    for (const reason of DENIAL_REASONS) this.#denials.labels(reason).inc(0);
    for (const reason of PACE_CHANGE_REASONS.filter((name) => name !== 'recovered' && name !== 'other')) this.#paceChanges.labels('down', reason).inc(0);
    this.#paceChanges.labels('up', 'recovered').inc(0);
  }

  page(page: PageObservation): void {
    const statusClass = statusClassOf(page.status);
    this.#pages.labels(statusClass).inc();
    this.#bytes.inc(page.bytes);
    if (page.retries > 0) this.#retries.inc(page.retries);
    this.#fetch.observe(page.timings.fetchMs / 1000);
    this.#gateWait.observe(page.timings.waitMs / 1000);
    this.#counts.pages += 1;
    this.#counts.retries += page.retries;
    this.#counts.statuses[statusClass] = (this.#counts.statuses[statusClass] ?? 0) + 1;
  }

  /** Requests repeated after a failure: got's retries in a failed attempt, a queue attempt BullMQ will retry. */
  retried(count = 1): void {
    this.#retries.inc(count);
    this.#counts.retries += count;
  }

  deadLettered(reason: string): void {
    this.#deadLetters.labels(REASON_CODE.test(reason) ? reason : 'other').inc();
    this.#counts.deadLetters += 1;
  }

  /** A job the gate deferred, why, and for how long (ms; when known, it is observed by the denying level). */
  denied(reason: string, retryInMs?: number): void {
    this.#denials.labels((DENIAL_REASONS as readonly string[]).includes(reason) ? reason : 'other').inc();
    if (retryInMs !== undefined && Number.isFinite(retryInMs) && retryInMs >= 0) this.#deferredWait.labels(levelOf(reason)).observe(retryInMs / 1000);
  }

  paceChanged(change: PaceChangeObservation): void {
    const reason = change.direction === 'up' ? 'recovered' : change.cause;
    this.#paceChanges.labels(change.direction, (PACE_CHANGE_REASONS as readonly string[]).includes(reason) ? reason : 'other').inc();
  }

  counters(): CrawlCounters {
    return { ...this.#counts, statuses: { ...this.#counts.statuses } };
  }
}

function statusClassOf(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'none';
}
