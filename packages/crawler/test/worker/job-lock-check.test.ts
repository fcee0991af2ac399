import { describe, expect, it } from 'vitest';
import { recentlyHeld } from '../../src/worker/job-lock-check.js';

/** A hold that counts its calls and answers as told. */
function countingHold(answers: boolean[]): { readonly hold: () => Promise<boolean>; readonly calls: () => number } {
  let calls = 0;
  return {
    hold: () => Promise.resolve(answers[calls++] ?? true),
    calls: () => calls,
  };
}

describe('recentlyHeld', () => {
  it('asks nothing within a quarter lock period of the take, and asks once that has passed', async () => {
    const fresh = countingHold([true]);
    const check = recentlyHeld(fresh.hold, 60_000, performance.now());
    expect(await check()).toBe(true);
    expect(await check()).toBe(true);
    expect(fresh.calls()).toBe(0);
    // Taken 20 s ago: a quarter of the 60 s lock has passed, so the first record checks, and the next do not.
    const older = countingHold([true]);
    const checkOlder = recentlyHeld(older.hold, 60_000, performance.now() - 20_000);
    expect(await checkOlder()).toBe(true);
    expect(await checkOlder()).toBe(true);
    expect(older.calls()).toBe(1);
  });

  it('without a take time, asks at the first record, then not again within a quarter period while held', async () => {
    const { hold, calls } = countingHold([true]);
    const check = recentlyHeld(hold, 60_000);
    expect(await check()).toBe(true);
    expect(await check()).toBe(true);
    expect(calls()).toBe(1);
  });

  it('a job taken long enough ago is checked, and a lost lock is asked about again at every record', async () => {
    const { hold, calls } = countingHold([false, false]);
    const check = recentlyHeld(hold, 60_000, performance.now() - 20_000);
    expect(await check()).toBe(false);
    expect(await check()).toBe(false);
    expect(calls()).toBe(2);
  });
});
