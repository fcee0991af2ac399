import { describe, expect, it } from 'vitest';
import { readInBatches } from '../src/index.js';

async function* items<T>(values: readonly T[], options: { readonly pauseBefore?: number; readonly until?: Promise<void>; readonly failAfter?: boolean } = {}): AsyncGenerator<T> {
  for (const [index, value] of values.entries()) {
    if (index === options.pauseBefore) await options.until;
    yield value;
  }
  if (options.failAfter === true) throw new Error('source broke');
}

function collect<T>(batches: T[][], batch: T[]): Promise<void> {
  batches.push(batch);
  return Promise.resolve();
}

describe('readInBatches', () => {
  it('hands on full batches, then what is left at the end', async () => {
    const batches: number[][] = [];
    await readInBatches(items([1, 2, 3, 4, 5, 6, 7]), { size: 3, maxAgeMs: 60_000, onBatch: (batch) => collect(batches, batch) });
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('hands on a partial batch once its first item is old, while the source still waits for the next', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const until = new Promise<void>((resolve) => (release = resolve));
    // The source stalls after two items until the first partial batch is out: only the age can hand it on.
    const reading = readInBatches(items([1, 2, 3], { pauseBefore: 2, until }), {
      size: 100,
      maxAgeMs: 20,
      onBatch: (batch) => {
        release();
        return collect(batches, batch);
      },
    });
    await reading;
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('a failing source: the items read before it failed are handed on, then its error is thrown', async () => {
    const batches: string[][] = [];
    await expect(readInBatches(items(['a', 'b'], { failAfter: true }), { size: 10, maxAgeMs: 60_000, onBatch: (batch) => collect(batches, batch) })).rejects.toThrow('source broke');
    expect(batches).toEqual([['a', 'b']]);
  });

  it('a failing onBatch stops the reading and its error is thrown', async () => {
    let pulled = 0;
    // An endless source that counts what was pulled from it.
    const counted: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: false, value: (pulled += 1) }) }),
    };
    await expect(readInBatches(counted, { size: 2, maxAgeMs: 60_000, onBatch: () => Promise.reject(new Error('sink full')) })).rejects.toThrow('sink full');
    expect(pulled).toBe(2);
  });
});
