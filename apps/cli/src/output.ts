import { describeGroupWaits, type CrawlStatus } from '@crawlq/crawler';

/**
 * Draws a progress line in place, only on a terminal; elsewhere (CI logs,
 * JSON log collectors) hands a line to `fallback` every 5 s instead, so stderr
 * stays one log line per line. `clear()` wipes the drawn line before a log
 * line is written, so the two are never glued together.
 */
export function progressWriter(
  fallback: (line: string) => void,
  stream: NodeJS.WriteStream = process.stderr,
): { update(line: string): void; clear(): void; done(): void } {
  let last = 0;
  let drawn = false;
  return {
    update(line) {
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else if (Date.now() - last >= 5_000) {
        fallback(line);
        last = Date.now();
      }
    },
    clear() {
      if (!drawn) return;
      stream.write('\r\x1b[2K');
      drawn = false;
    },
    done() {
      if (drawn) stream.write('\n');
      drawn = false;
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

export function formatProgress(status: CrawlStatus, elapsedMs: number): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? status.pages / seconds : 0;
  const line = `[${seconds.toFixed(1)}s] pages ${status.pages} (${rate.toFixed(1)}/s) | backlog ${status.backlog} waiting ${status.waiting} delayed ${status.delayed} active ${status.active} | dead-lettered ${status.deadLettered}`;
  // Say why jobs sit delayed: a crawl that seems stuck is usually waiting for a host.
  const waits = describeGroupWaits(status.groupWaits);
  return waits === undefined ? line : `${line} | ${waits}`;
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

/** Bytes for people: B, KiB, MiB, GiB. */
function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
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
