import type { Logger } from 'pino';

/** What one stats line reports; counters are this process's since it started. */
export interface StatsSnapshot {
  readonly pages: number;
  /** Pages by status class (`2xx`, `4xx`...). */
  readonly statuses: Readonly<Record<string, number>>;
  readonly retries: number;
  readonly deadLetters: number;
  /** Fleet-wide groups that cannot start a request now, by why; absent when Redis could not be read. */
  readonly groupsWaiting?: Readonly<Record<string, number>>;
}

/** The human message of a stats line; the same figures ride along as fields for JSON readers. */
export function formatStatsLine(snapshot: StatsSnapshot, ratePerSecond: number): string {
  const statuses = Object.entries(snapshot.statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status} ${count}`)
    .join(', ');
  const waiting = snapshot.groupsWaiting === undefined
    ? 'unknown (Redis unreadable)'
    : Object.entries(snapshot.groupsWaiting)
        .filter(([, count]) => count > 0)
        .map(([why, count]) => `${count} ${why}`)
        .join(', ') || 'none';
  return (
    `stats: ${snapshot.pages} pages (${ratePerSecond.toFixed(2)}/s)` +
    `, statuses ${statuses || 'none'}, retries ${snapshot.retries}, dead letters ${snapshot.deadLetters}, groups waiting: ${waiting}`
  );
}

export interface StatsLineOptions {
  /** 0 turns the stats line off. */
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly read: () => Promise<StatsSnapshot>;
}

/**
 * Logs a stats line every `intervalMs` (like Scrapy's LogStats), with the page
 * rate since the previous line. Each line is scheduled after the previous one
 * is written, so a slow Redis or a busy process never bunches lines together.
 * Returns a stop function; the timer never keeps the process alive.
 */
export function startStatsLine(options: StatsLineOptions): () => void {
  if (options.intervalMs <= 0) return () => undefined;
  let previousPages = 0;
  let previousAt = performance.now();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), options.intervalMs);
    timer.unref();
  };
  const tick = async () => {
    try {
      const snapshot = await options.read();
      if (stopped) return;
      const now = performance.now();
      const rate = (snapshot.pages - previousPages) / Math.max((now - previousAt) / 1000, 0.001);
      previousPages = snapshot.pages;
      previousAt = now;
      options.logger.info({ stats: { ...snapshot, rate: Math.round(rate * 100) / 100 } }, formatStatsLine(snapshot, rate));
    } catch (error) {
      options.logger.warn({ err: error }, 'stats line could not be read');
    } finally {
      schedule();
    }
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
