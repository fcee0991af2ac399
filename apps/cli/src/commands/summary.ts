import type { CrawlSummary } from '@crawlq/crawler';

/** `reviewCommand`: how to list the dead letters, as the alert e-mails say it. */
export function printSummary(summary: CrawlSummary, out: string, reviewCommand: string): void {
  const { status } = summary;
  const seconds = summary.elapsedMs / 1000;
  const statuses = Object.entries(status.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const lines = [
    summary.interrupted ? 'crawl interrupted; run the same command again to resume' : 'crawl finished',
    `  seeds          ${summary.seeds.accepted} accepted, ${summary.seeds.duplicate} duplicate, ${summary.seeds.rejected.length} rejected`,
    `  pages          ${status.pages} in ${seconds.toFixed(1)} s (${seconds > 0 ? (status.pages / seconds).toFixed(1) : '0'} pages/s)`,
    `  statuses       ${statuses || 'none'}`,
    ...Object.entries(status.skipped).map(([reason, count]) => `  skipped        ${count} (${reason})`),
    `  dead-lettered  ${status.deadLettered}${status.deadLettered > 0 ? `  (review: ${reviewCommand})` : ''}`,
    `  results        ${out}`,
  ];
  if (summary.alert) lines.push(`  alerts         ${summary.alert}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
