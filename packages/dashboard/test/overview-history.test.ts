import { describe, expect, it } from 'vitest';
import { CHARTED_GROUPS, HISTORY_SAMPLES, OverviewHistoryBook, type HistoryReading } from '../src/overview-history.js';

/** What the history reads of an overview. */
function reading(at: number, pages: number, byStatus: Record<string, number>, groups: Record<string, [admitted: number, deferred: number]> = {}): HistoryReading {
  return { at, status: { pages, byStatus }, groups: { groups: Object.entries(groups).map(([group, [admitted, deferred]]) => ({ group, admitted, deferred })) } };
}

describe('OverviewHistoryBook', () => {
  it('turns cumulative counters into per-second series between readings', () => {
    const book = new OverviewHistoryBook();
    book.add(reading(0, 0, {}, { 'a.test': [0, 0] }));
    expect(book.series()).toEqual({ at: [], pagesPerSecond: [], statuses: {}, groups: [] });
    book.add(reading(2_000, 10, { '2xx': 8, '4xx': 2 }, { 'a.test': [4, 6] }));
    book.add(reading(4_000, 30, { '2xx': 26, '4xx': 4 }, { 'a.test': [10, 6] }));
    expect(book.series()).toEqual({
      at: [2_000, 4_000],
      pagesPerSecond: [5, 10],
      statuses: { '2xx': [4, 9], '4xx': [1, 1] },
      // Not busy at the first reading (nothing counted yet): no value for the first interval.
      groups: [{ group: 'a.test', admitted: [null, 3], deferred: [null, 0] }],
    });
  });

  it('skips readings less than a second apart and starts over when the page counter goes back', () => {
    const book = new OverviewHistoryBook();
    book.add(reading(0, 100, { '2xx': 100 }));
    book.add(reading(500, 150, { '2xx': 150 }));
    book.add(reading(1_000, 200, { '2xx': 200 }));
    expect(book.series().pagesPerSecond).toEqual([100]);
    // The namespace was cleared: the readings before are another crawl's.
    book.add(reading(2_000, 5, { '2xx': 5 }));
    expect(book.series().at).toEqual([]);
    book.add(reading(3_000, 7, { '2xx': 7 }));
    expect(book.series().pagesPerSecond).toEqual([2]);
  });

  it(`follows at most ${CHARTED_GROUPS} groups, the busiest, and keeps at most ${HISTORY_SAMPLES} readings`, () => {
    const book = new OverviewHistoryBook();
    const counts = (step: number) => Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`g${String(index).padStart(2, '0')}.test`, [step * (index + 1), 0] as [number, number]]));
    for (let step = 0; step <= HISTORY_SAMPLES + 5; step += 1) book.add(reading(step * 1_000, step, {}, counts(step)));
    const series = book.series();
    expect(series.at).toHaveLength(HISTORY_SAMPLES - 1);
    expect(series.groups.map((group) => group.group)).toEqual(['g19.test', 'g18.test', 'g17.test', 'g16.test', 'g15.test', 'g14.test', 'g13.test', 'g12.test']);
    expect(series.groups[0]?.admitted.at(-1)).toBe(20);
  });

  it('reads a counter that went back (a limiter reset) as 0, never a negative rate', () => {
    const book = new OverviewHistoryBook();
    book.add(reading(0, 0, {}, { 'a.test': [50, 9] }));
    book.add(reading(1_000, 0, {}, { 'a.test': [2, 9] }));
    expect(book.series().groups[0]?.admitted).toEqual([0]);
  });
});
