import { describe, expect, it } from 'vitest';
import { peakInFlight } from '@crawlq/demo-site';

describe('peakInFlight', () => {
  it('counts overlapping requests, not back-to-back ones, and an unfinished request to the end', () => {
    expect(peakInFlight([])).toBe(0);
    expect(peakInFlight([{ startedAt: 0, endedAt: 10 }, { startedAt: 10, endedAt: 20 }])).toBe(1);
    expect(peakInFlight([{ startedAt: 0, endedAt: 10 }, { startedAt: 5, endedAt: 20 }, { startedAt: 6, endedAt: 7 }])).toBe(3);
    expect(peakInFlight([{ startedAt: 0, endedAt: Number.NaN }, { startedAt: 100, endedAt: 110 }])).toBe(2);
  });
});
