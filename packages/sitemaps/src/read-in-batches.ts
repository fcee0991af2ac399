/** Options of {@link readInBatches}. */
export interface ReadInBatchesOptions<T> {
  /** A batch is handed on when it holds this many items. */
  readonly size: number;
  /** ...or once its first item is this old and the source has not yet produced the next one at once. */
  readonly maxAgeMs: number;
  readonly onBatch: (batch: T[]) => Promise<void>;
}

const STALE = Symbol('stale');
const READY = Symbol('ready');

/**
 * Reads `source` to its end, handing items on in batches: full ones, and a
 * partial one when it has grown old, so items of a slowly arriving source
 * (a sitemap still downloading) are acted on while the rest is awaited. One
 * timer per batch, so a fast source costs no timer per item.
 *
 * When `source` fails, the items read before are handed on first, then its
 * error is thrown. When `onBatch` fails, reading stops and that error is thrown.
 */
export async function readInBatches<T>(source: AsyncIterable<T>, options: ReadInBatchesOptions<T>): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  let batch: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  let aged: Promise<typeof STALE> | undefined;
  let finished = false;
  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    aged = undefined;
    if (batch.length === 0) return;
    const full = batch;
    batch = [];
    await options.onBatch(full);
  };
  try {
    for (;;) {
      const pending = iterator.next();
      if (aged !== undefined && (await Promise.race([pending.then(() => READY, () => READY), aged])) === STALE) await flush();
      let next: IteratorResult<T>;
      try {
        next = await pending;
      } catch (error) {
        finished = true;
        await flush();
        throw error;
      }
      if (next.done === true) break;
      batch.push(next.value);
      aged ??= new Promise((resolve) => (timer = setTimeout(resolve, options.maxAgeMs, STALE)));
      if (batch.length >= options.size) await flush();
    }
    finished = true;
    await flush();
  } finally {
    clearTimeout(timer);
    // onBatch failed: stop the source. Not awaited: it may be waiting for
    // input, and the caller is the one that can cut that (e.g. destroy a body).
    if (!finished) void iterator.return?.()?.catch(() => undefined);
  }
}
