import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ArrivalClock, maxCertainlyInWindow, maxInWindow, widestGaps } from '../src/windows.js';

const exact = (at: number) => ({ at, notBefore: at });

describe('maxCertainlyInWindow', () => {
  it('equals maxInWindow when every arrival time is exact', () => {
    const times = [0, 100, 150, 990, 999, 1000, 1100, 1101, 1102];
    expect(maxCertainlyInWindow(times.map(exact), 1000)).toBe(maxInWindow(times, 1000));
    expect(maxCertainlyInWindow(times.map(exact), 1000)).toBe(7);
  });

  it('does not count an arrival a stall could have placed outside the window', () => {
    // Eleven handler times inside 1 s, but the first two ran after a 150 ms stall: the earlier
    // of them may have come at -150, and then no window of 1 s certainly holds eleven.
    const arrivals = [{ at: 0, notBefore: -150 }, { at: 0, notBefore: -150 }, ...Array.from({ length: 9 }, (_, i) => exact(100 * (i + 1)))];
    expect(maxInWindow(arrivals.map((arrival) => arrival.at), 1000)).toBe(11);
    expect(maxCertainlyInWindow(arrivals, 1000)).toBe(10);
  });

  it('still counts a burst that no stall explains', () => {
    const arrivals = [{ at: 500, notBefore: 400 }, ...Array.from({ length: 11 }, (_, i) => exact(10 * i))];
    expect(maxCertainlyInWindow(arrivals, 1000)).toBe(12);
  });
});

describe('widestGaps', () => {
  it('widens a gap by the stall that may have stamped its first arrival late, and only that one', () => {
    // Handler times 0, 70, 200; the one at 70 ran after a stall and may have come at 40.
    const arrivals = [exact(200), { at: 70, notBefore: 40 }, exact(0)];
    expect(widestGaps(arrivals)).toEqual([70, 160]);
    expect(widestGaps([exact(5)])).toEqual([]);
    expect(widestGaps([])).toEqual([]);
  });
});

describe('ArrivalClock', () => {
  it('bounds an arrival handled after a blocked loop by the time before the block', async () => {
    const clock = new ArrivalClock();
    try {
      await sleep(20);
      const blockedAt = Date.now();
      while (Date.now() - blockedAt < 60) {
        // the loop is busy: no tick runs
      }
      const arrival = clock.arrival();
      expect(arrival.notBefore).toBeLessThanOrEqual(blockedAt);
      expect(arrival.at - arrival.notBefore).toBeGreaterThanOrEqual(60);
      expect(clock.longestGapMs).toBeGreaterThanOrEqual(60);
      // Once the loop runs freely again, two ticks move the bound past the block (a loaded
      // machine may run the 1 ms timer only now and then: as many sleeps as that takes).
      let free = clock.arrival();
      for (let slept = 0; free.notBefore <= blockedAt && slept < 5_000; slept += 5) {
        await sleep(5);
        free = clock.arrival();
      }
      expect(free.notBefore).toBeGreaterThan(blockedAt);
      expect(free.notBefore).toBeLessThanOrEqual(free.at);
    } finally {
      clock.stop();
    }
  });

  it('bounds afterwards a stamp taken elsewhere, as arrival() would have at the time', async () => {
    const createdAt = Date.now();
    const clock = new ArrivalClock({ keepTicks: true });
    try {
      expect(clock.notBeforeAt(createdAt - 1_000)).toBe(Number.NEGATIVE_INFINITY);
      await sleep(20);
      const blockedAt = Date.now();
      while (Date.now() - blockedAt < 60) {
        // the loop is busy: no tick runs
      }
      const stampedAfterBlock = Date.now();
      expect(clock.notBeforeAt(stampedAfterBlock)).toBeLessThanOrEqual(blockedAt);
      expect(clock.notBeforeAt(stampedAfterBlock)).toBe(clock.arrival().notBefore);
      await sleep(20);
      // A stamp before the block is bounded by ticks before it, not by the block.
      const before = clock.notBeforeAt(blockedAt - 5);
      expect(before).toBeLessThanOrEqual(blockedAt - 5);
      expect(before).toBeGreaterThanOrEqual(createdAt);
    } finally {
      clock.stop();
    }
  });
  it('refuses notBeforeAt without kept ticks', () => {
    const clock = new ArrivalClock();
    try {
      expect(() => clock.notBeforeAt(Date.now())).toThrow(/keepTicks/);
    } finally {
      clock.stop();
    }
  });
});
