import type { AddResult } from './frontier.js';

/** How many URLs of an enqueue were accepted, already seen, refused (invalid) or over --max-pages. */
export interface EnqueueCounts {
  accepted: number;
  duplicate: number;
  rejected: number;
  overLimit: number;
}

/** Running totals of a streamed enqueue. */
export interface EnqueueTotals extends EnqueueCounts {
  lines: number;
}

export function emptyEnqueueCounts(): EnqueueCounts {
  return { accepted: 0, duplicate: 0, rejected: 0, overLimit: 0 };
}

/**
 * Adds one outcome to running counts, in place, and returns `into`: a
 * frontier batch (its `rejected` URLs counted) or other counts. A part
 * without `rejected` (sitemap seeding, which has no refused lines to report)
 * adds none.
 */
export function addEnqueueCounts<T extends EnqueueCounts>(into: T, part: AddResult | Partial<EnqueueCounts>): T {
  into.accepted += part.accepted ?? 0;
  into.duplicate += part.duplicate ?? 0;
  into.overLimit += part.overLimit ?? 0;
  const rejected = part.rejected ?? 0;
  into.rejected += typeof rejected === 'number' ? rejected : rejected.length;
  return into;
}
