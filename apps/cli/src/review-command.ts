import { crawlqCommand } from '@crawlq/config';

/**
 * How an operator runs this CLI: `pnpm crawlq` in a dev checkout (the root
 * script's launcher says so through CRAWLQ_INVOKED_AS, whether it then runs
 * the build or the sources), otherwise `crawlq`, the installed binary.
 * Workers that `crawl` spawns inherit the variable, so they say the same.
 * Hints name it: the review command, a worker's refusal of a conflicting flag.
 */
export const CLI = process.env.CRAWLQ_INVOKED_AS ?? (import.meta.url.endsWith('.ts') ? 'pnpm crawlq' : 'crawlq');

/** The command alert e-mails and the crawl summary tell operators to run, with `--namespace` unless it is the default. */
export function reviewCommandFor(namespace: string): string {
  return crawlqCommand('dlq list', namespace, CLI);
}
