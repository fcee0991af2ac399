import type { CrawlSummary } from '@crawlq/crawler';
import { EXIT } from '../exit-codes.js';
import { reviewCommandFor } from '../review-command.js';

/** Every seed was refused (a typo, a scheme crawlq does not fetch): the crawl had nothing to do, which is an error. */
export function everySeedRejected(summary: CrawlSummary): boolean {
  const { seeds } = summary;
  return seeds.rejected.length > 0 && seeds.accepted === 0 && seeds.duplicate === 0;
}

/** How a crawl that ran to its end exits (docs/01-getting-started.md, "Exit codes"). */
export function summaryExitCode(summary: CrawlSummary): number {
  if (summary.interrupted) return EXIT.interrupted;
  return everySeedRejected(summary) ? EXIT.error : EXIT.ok;
}

/** The crawl summary as one JSON object (`--json`): what the text says, for scripts. */
export function summaryJson(summary: CrawlSummary, out: string): Record<string, unknown> {
  const { status, seeds } = summary;
  const seconds = summary.elapsedMs / 1000;
  return {
    finished: !summary.interrupted,
    interrupted: summary.interrupted,
    resumed: summary.resumed,
    seeds: {
      accepted: seeds.accepted,
      duplicate: seeds.duplicate,
      rejected: seeds.rejected.map((rejected) => ({ input: rejected.input, reason: rejected.reason, message: rejected.message })),
    },
    pages: status.pages,
    elapsedMs: Math.round(summary.elapsedMs),
    pagesPerSecond: seconds > 0 ? Number((status.pages / seconds).toFixed(1)) : 0,
    byStatus: status.byStatus,
    skipped: status.skipped,
    deadLettered: status.deadLettered,
    results: out,
    alert: summary.alert ?? null,
  };
}

export function printSummary(summary: CrawlSummary, out: string, options: { namespace: string; json?: boolean }): void {
  if (options.json === true) {
    process.stdout.write(`${JSON.stringify(summaryJson(summary, out))}\n`);
    return;
  }
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
    `  dead-lettered  ${status.deadLettered}${status.deadLettered > 0 ? `  (review: ${reviewCommandFor(options.namespace)})` : ''}`,
    `  results        ${out}`,
  ];
  if (summary.alert) lines.push(`  alerts         ${summary.alert}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
