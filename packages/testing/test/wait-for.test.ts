import { describe, expect, it } from 'vitest';
import { waitFor } from '../src/index.js';

describe('waitFor', () => {
  it('returns the first value that is not undefined, null or false', async () => {
    let calls = 0;
    const values = [undefined, null, false, 0, 1];
    await expect(waitFor(() => values[calls++], { intervalMs: 1 })).resolves.toBe(0);
    expect(calls).toBe(4);
  });

  it('names what it waited for after the deadline; a function is asked then, with the last state seen', async () => {
    await expect(waitFor(() => undefined, { timeoutMs: 20, intervalMs: 5, what: 'the moon' })).rejects.toThrow('timed out waiting for the moon');
    let seen = 0;
    await expect(
      waitFor(
        () => {
          seen += 1;
          return false;
        },
        { timeoutMs: 20, intervalMs: 5, what: () => `the crawl (checked ${seen} times)` },
      ),
    ).rejects.toThrow(/timed out waiting for the crawl \(checked \d+ times\)/);
  });
});
