import { describeGroupWaits, type CrawlStatus } from '@crawlq/crawler';

/** Writes a progress line in place on a terminal, as plain lines elsewhere (CI logs). */
export function progressWriter(stream: NodeJS.WriteStream = process.stderr): { update(line: string): void; done(): void } {
  let last = 0;
  let wrote = false;
  return {
    update(line) {
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${line}`);
        wrote = true;
      } else if (Date.now() - last >= 5_000) {
        stream.write(`${line}\n`);
        last = Date.now();
      }
    },
    done() {
      if (wrote) stream.write('\n');
    },
  };
}

export function formatProgress(status: CrawlStatus, elapsedMs: number): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? status.pages / seconds : 0;
  const line = `[${seconds.toFixed(1)}s] pages ${status.pages} (${rate.toFixed(1)}/s) | waiting ${status.waiting} delayed ${status.delayed} active ${status.active} | dead-lettered ${status.deadLettered}`;
  // Say why jobs sit delayed: a crawl that seems stuck is usually waiting for a host.
  const waits = describeGroupWaits(status.groupWaits);
  return waits === undefined ? line : `${line} | ${waits}`;
}

export function formatStatusTable(status: CrawlStatus): string {
  const rows: [string, number | string][] = [
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
  return rows.map(([name, value]) => `${name.padEnd(14)} ${value}`).join('\n');
}
