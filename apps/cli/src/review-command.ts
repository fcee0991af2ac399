import { dlqReviewCommand } from '@crawlq/crawler';

/**
 * How an operator runs this CLI: `pnpm crawlq` in a dev checkout, where it
 * runs from its TypeScript sources (the root `crawlq` script), otherwise
 * `crawlq`, the installed (built) binary. Workers that `crawl` spawns run
 * the same entry, so they say the same.
 */
const CLI = import.meta.url.endsWith('.ts') ? 'pnpm crawlq' : 'crawlq';

/** The command alert e-mails from this process tell operators to run, with `--namespace` unless it is the default. */
export function reviewCommandFor(namespace: string): string {
  return dlqReviewCommand(CLI, namespace);
}
