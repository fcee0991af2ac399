/**
 * The largest number of `times` inside any half-open window [t, t + windowMs)
 * that starts at one of them: what a server counting starts per window would
 * count at its busiest, the bound every politeness test judges.
 */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let end = 0;
  sorted.forEach((from, start) => {
    while (end < sorted.length && (sorted[end] ?? Number.POSITIVE_INFINITY) < from + windowMs) end += 1;
    best = Math.max(best, end - start);
  });
  return best;
}
