import type { Frontier, ReleaseResult } from '@crawlq/frontier';
import { describe, expect, it } from 'vitest';
import { BacklogReleaser } from '../../src/worker/backlog-releaser.js';

/** A frontier whose release reports `result` and records when it was called (a pure unit: the loop's timing only). */
function fakeFrontier(result: Partial<ReleaseResult>) {
  const calls: number[] = [];
  let onCall: (() => void) | undefined;
  const frontier = {
    release: (): Promise<ReleaseResult> => {
      calls.push(performance.now());
      onCall?.();
      return Promise.resolve({ released: 0, jobs: 0, releasers: 1, saturated: false, nextDueMs: undefined, ...result });
    },
  } as unknown as Frontier;
  const nextCall = () => new Promise<void>((resolve) => (onCall = resolve));
  return { frontier, calls, nextCall };
}

describe('BacklogReleaser', () => {
  it('sleeps until the next group is due, and a nudge (this process added URLs) cuts the sleep to the fleet pace', async () => {
    const { frontier, calls, nextCall } = fakeFrontier({ nextDueMs: 3_600_000 });
    const first = nextCall();
    const releaser = new BacklogReleaser({ frontier: () => frontier, concurrency: 4, onError: () => undefined, idleMs: 60_000 });
    try {
      await first;
      // Nothing is due for an hour, the idle bound is a minute: no release in the next half second, at any speed.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(calls).toHaveLength(1);
      const second = nextCall();
      releaser.nudge();
      await second;
      expect(calls).toHaveLength(2);
      // Never sooner than the fleet's pace (100 ms for one releaser, less its 20% spread) after the last release.
      expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(80);
    } finally {
      await releaser.stop();
    }
  });

  it('stops without its sleep when asked to during a release', async () => {
    let finish: (() => void) | undefined;
    const frontier = {
      release: () =>
        new Promise<ReleaseResult>((resolve) => {
          finish = () => resolve({ released: 0, jobs: 0, releasers: 1, saturated: false, nextDueMs: undefined });
        }),
    } as unknown as Frontier;
    const releaser = new BacklogReleaser({ frontier: () => frontier, concurrency: 4, onError: () => undefined, idleMs: 600_000 });
    const stopped = releaser.stop();
    finish?.();
    // With the idle sleep of ten minutes after that release, this would time out.
    await stopped;
  }, 20_000);

  // A group due now, or none waiting at all (URLs a producer adds to an idle fleet must go out at once):
  // releases follow at the fleet's pace, never closer. With the idle sleep of ten minutes they would not
  // come, and the test would time out.
  it.each([
    ['a group is due', 0],
    ['no group waits at all', undefined],
  ])('releases at the fleet pace, never closer, while %s', async (_, nextDueMs) => {
    const { frontier, calls, nextCall } = fakeFrontier({ nextDueMs });
    const releaser = new BacklogReleaser({ frontier: () => frontier, concurrency: 4, onError: () => undefined, idleMs: 600_000 });
    try {
      for (let i = 0; i < 3; i += 1) await nextCall();
      for (let i = 1; i < calls.length; i += 1) expect(calls[i]! - calls[i - 1]!).toBeGreaterThanOrEqual(80);
    } finally {
      await releaser.stop();
    }
  }, 20_000);

  it('releases again without the idle sleep while a release fills the queue, though no group is due for an hour', async () => {
    const { frontier, calls, nextCall } = fakeFrontier({ jobs: 1_000, nextDueMs: 3_600_000 });
    const releaser = new BacklogReleaser({ frontier: () => frontier, concurrency: 4, onError: () => undefined, idleMs: 600_000 });
    try {
      // With the idle sleep of ten minutes these would not come, and the test would time out.
      for (let i = 0; i < 3; i += 1) await nextCall();
      expect(calls.length).toBeGreaterThanOrEqual(4);
    } finally {
      await releaser.stop();
    }
  }, 20_000);
});
