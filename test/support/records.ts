import { existsSync, readFileSync } from 'node:fs';
import type { PageRecord } from '@crawlq/crawl-control';
import type { DemoSite } from '@crawlq/demo-site';
import { expect } from 'vitest';

/** Reads a JSONL results file; every line must parse. */
export function readRecords(file: string): PageRecord[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PageRecord);
}

/** URLs that appear more than once. */
export function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) (seen.has(value) ? repeated : seen).add(value);
  return [...repeated];
}

/**
 * After a Redis restart mid-crawl (`pagesAtStop` pages in when Redis went):
 * every reachable page is in the results file `out`, and each was requested
 * at the site and written exactly once. Returns what was expected and written.
 */
export function expectEveryPageOnce(
  site: Pick<DemoSite, 'reachable' | 'seeds' | 'requestCount'>,
  out: string,
  run: { readonly pagesAtStop: number; readonly stderr: string; readonly stdout: string },
): { expected: Set<string>; urls: string[] } {
  const expected = site.reachable({ seeds: site.seeds, maxDepth: 1_000, scope: 'host' });
  const urls = readRecords(out).map((record) => record.url);
  // The restart happened mid-crawl, and no page was lost to it.
  expect(run.pagesAtStop).toBeLessThan(expected.size);
  const log = run.stderr.split('\n').filter((line) => !/^\[[\d.]+s\] pages/.test(line)).join('\n');
  expect(new Set(urls), `missing ${[...expected].filter((url) => !urls.includes(url)).join(' ')}\n${log}\n${run.stdout}`).toEqual(expected);
  // Exactly once, as the site saw it and as the results hold it: a clean
  // restart keeps every job's lock (Redis expiry is wall-clock, the locks
  // outlive a 5 s gap), so nothing in flight runs a second time.
  const fetchedTwice = [...expected].filter((url) => site.requestCount(url) !== 1);
  expect(fetchedTwice.map((url) => `${url} x${site.requestCount(url)}`)).toEqual([]);
  expect(duplicates(urls)).toEqual([]);
  return { expected, urls };
}
