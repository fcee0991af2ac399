import { describe, expect, it } from 'vitest';
import { RedisClock } from '../src/redis-clock.js';

describe('RedisClock', () => {
  it('knows nothing before the first round trip', () => {
    expect(new RedisClock().toLocal(1_000)).toBeUndefined();
  });

  it('maps Redis time to local time through the midpoint of the round trip', () => {
    const clock = new RedisClock();
    // Sent at local 100, back at 104; Redis read 5,000,102 in between: offset 5,000,000.
    clock.observe(100, 104, 5_000_102);
    expect(clock.toLocal(5_000_300)).toBe(300);
  });

  it('trusts the shortest round trip: a reply delayed by a busy event loop does not move the estimate', () => {
    const clock = new RedisClock();
    clock.observe(100, 102, 5_000_101);
    // Same true offset, but the reply sat 80 ms in the loop: the midpoint would be 40 ms off.
    clock.observe(200, 282, 5_000_201);
    expect(clock.toLocal(5_000_500)).toBe(500);
  });

  it('lets an old best sample age, so drift between the clocks is followed', () => {
    const clock = new RedisClock();
    clock.observe(0, 1, 5_000_000.5);
    // 60 s later the old 1 ms sample counts as 61 ms; a 5 ms sample with a drifted offset (+3 ms) wins.
    clock.observe(60_000, 60_005, 5_060_005.5);
    expect(clock.toLocal(5_070_000)).toBeCloseTo(69_997, 5);
  });

  it('ignores samples that cannot be right', () => {
    const clock = new RedisClock();
    clock.observe(10, 12, 1_011);
    clock.observe(20, 19, 9_999_999);
    clock.observe(30, 31, Number.NaN);
    expect(clock.toLocal(1_100)).toBe(100);
  });
});
