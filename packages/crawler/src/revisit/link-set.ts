import { createHash } from 'node:crypto';

/**
 * A page's links as an 8-bit hash (0-255), compared from one change of the
 * page to the next to tell a hub (a page whose changes change its links) from
 * a page whose text changes only. The set is what the crawl follows from the
 * page: normalised, inside the crawl's scope, each link once, in any order
 * (sorted before hashing), so a page that only reorders or repeats its links
 * keeps its hash. One byte is what the state's budget of 64 bytes per known
 * URL leaves (two measured 64.02): two different sets share a hash once in
 * 256 changes, and that change counts as one of text only (a hub is taken
 * for a page whose text changed until its next change; never the reverse).
 * Undefined for no links at all: such a page is no hub, and keeps no hash.
 */
export function linkSetHash(links: Iterable<string>): number | undefined {
  const unique = [...new Set(links)];
  if (unique.length === 0) return undefined;
  // Code unit order: the same for every process, whatever its locale.
  unique.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash('sha256');
  for (const link of unique) hash.update(`${link}\n`);
  return hash.digest().readUInt8(0);
}

/**
 * Whether a page is a hub after a fetch: a change compares its link set with
 * the one kept at its last change (neither known: no); a fetch that found no
 * change leaves the verdict of the last one.
 */
export function isHub(options: { readonly changed: boolean; readonly before: number | undefined; readonly after: number | undefined; readonly wasHub: boolean }): boolean {
  if (!options.changed) return options.wasHub;
  return options.before !== undefined && options.after !== undefined && options.before !== options.after;
}
