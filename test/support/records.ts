import { existsSync, readFileSync } from 'node:fs';
import type { PageRecord } from '@crawlq/crawler';

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
