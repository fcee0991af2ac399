import { describeGroupWaits, formatBytes, type CrawlStatus } from '@crawlq/crawl-control';
import type { RevisitGroupsRead } from '@crawlq/frontier';
import { colorEnabled, colors as makeColors, type Colors } from '@crawlq/logging';

/** Where `crawl` writes while its progress is drawn: logs go above the progress, which is redrawn under them. */
export interface ProgressOutput {
  /** Draws the progress in place on a terminal; elsewhere hands a plain line to the fallback every 5 s. */
  update(status: CrawlStatus, elapsedMs: number): void;
  /**
   * Writes whole lines of log text. On a terminal the progress is cleared
   * first and drawn again after them, so a log line never lands on it.
   */
  write(text: string): void;
  /** Wipes the progress (before text written straight to the stream); the next update draws it again. */
  clear(): void;
  /** Leaves the last progress where it is, for the summary to follow. */
  done(): void;
  /** Whether text written here may be coloured (a terminal, NO_COLOR unset). */
  readonly color: boolean;
  /** For a logger: its lines go through `write`; `isTTY` as the stream's. */
  readonly logStream: { write(text: string): boolean; readonly isTTY: boolean };
}

export interface ProgressOptions {
  /** @default process.stderr */
  readonly stream?: NodeJS.WriteStream;
  /** Pages the crawl stops at (--max-pages): a bar with an ETA when known. */
  readonly total?: number | undefined;
  /** @default colorEnabled(stream) */
  readonly color?: boolean;
}

/**
 * The progress of a crawl on stderr. On a terminal it is drawn in place by
 * log-update, which also erases and redraws it around each log line, so the
 * two are never glued together; coloured unless NO_COLOR is set. Elsewhere
 * (CI logs, JSON log collectors) it hands a plain line to `fallback` every
 * 5 s instead, so stderr stays one log line per line.
 */
export async function progressWriter(fallback: (line: string) => void, options: ProgressOptions = {}): Promise<ProgressOutput> {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const color = options.color ?? colorEnabled(stream);
  const paint = makeColors(color);
  // Loaded only for a terminal: log-update's text-width tables and segmenter
  // cost every other start (a CI log, a worker host, a test's child) about
  // 30 ms of CPU for nothing. The cursor stays visible: hiding it would need
  // restoring on every way out (a signal, a crash).
  const render = tty ? (await import('log-update')).createLogUpdate(stream, { showCursor: true }) : undefined;
  /** The progress as drawn now, if it is. */
  let drawn: string | undefined;
  let last = 0;
  const write = (text: string): void => {
    if (render === undefined || drawn === undefined) {
      stream.write(text);
      return;
    }
    // Erased, the log text written as it is (the terminal wraps it, so a
    // copied line stays one line), then the progress drawn again below it.
    render.clear();
    stream.write(text);
    render(drawn);
  };
  return {
    update(status, elapsedMs) {
      if (render !== undefined) {
        drawn = formatProgressBar(status, elapsedMs, { total: options.total, colors: paint });
        render(drawn);
      } else if (Date.now() - last >= 5_000) {
        fallback(formatProgress(status, elapsedMs));
        last = Date.now();
      }
    },
    write,
    clear() {
      if (render === undefined || drawn === undefined) return;
      render.clear();
      drawn = undefined;
    },
    done() {
      if (render === undefined || drawn === undefined) return;
      render.done();
      drawn = undefined;
    },
    color,
    logStream: {
      write: (text) => {
        write(text);
        return true;
      },
      isTTY: tty,
    },
  };
}

/** Splits a child's output into whole lines, so lines of several workers never interleave mid-line. */
export function lineSplitter(onLine: (line: string) => void): { push(chunk: string): void; end(): void } {
  let rest = '';
  return {
    push(chunk) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) onLine(`${part}\n`);
    },
    end() {
      if (rest !== '') onLine(`${rest}\n`);
      rest = '';
    },
  };
}

export function formatProgress(status: CrawlStatus, elapsedMs: number, paint: Colors = makeColors(false)): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? status.pages / seconds : 0;
  const dead = `dead-lettered ${status.deadLettered}`;
  const line = `[${seconds.toFixed(1)}s] pages ${paint.bold(status.pages)} (${rate.toFixed(1)}/s) | backlog ${status.backlog} waiting ${status.waiting} delayed ${status.delayed} active ${status.active} | ${status.deadLettered > 0 ? paint.red(dead) : dead}`;
  // Say why jobs sit delayed: a crawl that seems stuck is usually waiting for a host.
  const waits = describeGroupWaits(status.groupWaits);
  return waits === undefined ? line : `${line} | ${paint.yellow(waits)}`;
}

const BAR_WIDTH = 20;

/**
 * The terminal's progress: with a known total (--max-pages), a bar, the share
 * done and an ETA at the rate so far, then the same figures as
 * {@link formatProgress}. Pages done counts the dead-lettered too: they are
 * finished, and the total is of URLs admitted.
 */
export function formatProgressBar(status: CrawlStatus, elapsedMs: number, options: { total?: number | undefined; colors?: Colors } = {}): string {
  const paint = options.colors ?? makeColors(false);
  const line = formatProgress(status, elapsedMs, paint);
  const { total } = options;
  if (total === undefined || total <= 0) return line;
  const done = Math.min(status.pages + status.deadLettered, total);
  const share = done / total;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `${paint.cyan('█'.repeat(filled))}${paint.dim('░'.repeat(BAR_WIDTH - filled))}`;
  const perMs = elapsedMs > 0 ? done / elapsedMs : 0;
  const eta = done >= total ? 'done' : perMs > 0 ? `ETA ${formatEta((total - done) / perMs)}` : 'ETA –';
  return `${bar} ${Math.floor(share * 100)}% ${done}/${total} ${eta} ${line}`;
}

/** `42s`, `3m05s`, `2h07m`. */
export function formatEta(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export function formatStatusTable(status: CrawlStatus): string {
  const rows: [string, number | string][] = [
    ['backlog', status.backlog],
    ['waiting', status.waiting],
    ['delayed', status.delayed],
    ['active', status.active],
    ['completed', status.pages],
    ['failed', status.failed],
    ['dead-lettered', status.deadLettered],
    ['done', status.done ? 'yes' : 'no'],
  ];
  const waits = describeGroupWaits(status.groupWaits);
  if (waits !== undefined) rows.push(['groups waiting', waits.replace(/^\d+ groups? waiting: /, `${status.groupWaits.length}: `)]);
  const revisits = formatRevisits(status.revisits);
  if (revisits !== undefined) rows.push(...revisits);
  return rows.map(([name, value]) => `${name.padEnd(14)} ${value}`).join('\n');
}

/**
 * The continuous crawl's rows of `status` (none when nothing was ever
 * scheduled): known URLs, due now / in the next hour, revisit outcomes, bytes saved.
 */
export function formatRevisits(revisits: CrawlStatus['revisits']): [string, string][] | undefined {
  if (revisits.known === 0 && revisits.fetched === 0) return undefined;
  const revisited = revisits.changed + revisits.unchanged + revisits.notModified;
  return [
    ['known URLs', `${revisits.known} (${revisits.retired} retired)`],
    ['due', `${revisits.dueNow} now, ${revisits.dueNextHour} within the next hour`],
    ['revisits', `${revisited}: ${revisits.changed} changed, ${revisits.unchanged + revisits.notModified} unchanged (${revisits.notModified} answered 304, ${revisits.unchanged} same content), ${revisits.gone} gone`],
    ['bytes saved', `${formatBytes(revisits.bytesSaved)} (bodies 304 answers did not send)`],
  ];
}

/** `group list --revisits`: one row per group with continuous crawl figures. */
export function formatGroupRevisits(read: RevisitGroupsRead): string {
  if (read.groups.length === 0) return 'no continuous crawl figures yet (no URL fetched under --revisit)';
  // due: schedule entries (an upper bound, as the fleet's); unchanged: 200s with the same content plus 304s.
  const header = ['group', 'known', 'due now', 'due 1h', 'changed', 'unchanged', '304', 'gone', 'bytes saved'];
  const rows = read.groups.map((figures) => [
    figures.group,
    String(figures.known),
    String(figures.dueNow ?? '-'),
    String(figures.dueNextHour ?? '-'),
    String(figures.changed),
    String(figures.unchanged + figures.notModified),
    String(figures.notModified),
    String(figures.gone),
    formatBytes(figures.bytesSaved),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const table = [header, ...rows].map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ')).join('\n');
  return read.dueComplete ? table : `${table}\n(due counts are lower bounds: more schedule entries are due within the hour than one read takes)`;
}
