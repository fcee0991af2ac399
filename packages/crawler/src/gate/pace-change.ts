import type { PaceChange } from '@crawlq/group-limiter';

/**
 * The log line of a change to a group's adaptive pace: `group example.org:
 * pace cut to 0.50 of its limits (was 1.00): HTTP 503`, or `group
 * example.org: back at full pace (was cut to 0.25: HTTP 503)`.
 */
export function describePaceChange(change: PaceChange): string {
  if (change.direction === 'up') {
    return `group ${change.group}: back at full pace (was cut to ${change.from.toFixed(2)}${change.reason === '' ? '' : `: ${change.reason}`})`;
  }
  return `group ${change.group}: pace cut to ${change.to.toFixed(2)} of its limits (was ${change.from.toFixed(2)}): ${change.reason}`;
}
