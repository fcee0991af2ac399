import { describe, expect, it } from 'vitest';
import { JobSlots } from '../src/job-slots.js';

describe('JobSlots', () => {
  it('never runs more than its capacity at once, and runs every task in arrival order', async () => {
    const slots = new JobSlots(3);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const tasks = Array.from({ length: 10 }, (_, index) =>
      slots.run(async () => {
        started.push(index);
        running += 1;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        return index;
      }),
    );
    // Release tasks one at a time, whatever order they started in, until all are done.
    while (started.length < 10 || releases.length > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      expect(slots.running).toBeLessThanOrEqual(3);
      releases.shift()?.();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(slots.running).toBe(0);
  });

  it('frees the slot of a task that throws', async () => {
    const slots = new JobSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(() => Promise.resolve('next'))).toBe('next');
    expect(slots.running).toBe(0);
  });

  it('lets a task give its slot up while it only waits, and take one again (in arrival order) before it goes on', async () => {
    const slots = new JobSlots(1);
    const events: string[] = [];
    let wake: (() => void) | undefined;
    const sleeper = slots.run(async () => {
      events.push('sleeper works');
      await slots.idle(() => new Promise<void>((resolve) => (wake = resolve)));
      events.push('sleeper works again');
    });
    let release: (() => void) | undefined;
    const other = slots.run(async () => {
      events.push('other works');
      await new Promise<void>((resolve) => (release = resolve));
      events.push('other done');
    });
    // The sleeper's slot went to the other task while it waits.
    while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
    expect(slots.running).toBe(1);
    // Awake while the other holds the only slot: it waits for it.
    wake?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['sleeper works', 'other works']);
    release();
    await Promise.all([sleeper, other]);
    expect(events).toEqual(['sleeper works', 'other works', 'other done', 'sleeper works again']);
    expect(slots.running).toBe(0);
  });

  it('refuses a capacity below one', () => {
    expect(() => new JobSlots(0)).toThrow(RangeError);
  });
});
