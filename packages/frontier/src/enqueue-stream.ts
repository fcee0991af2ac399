import type { AddResult, Frontier, RejectedUrl } from './frontier.js';

/** Running totals of a streamed enqueue. */
export interface EnqueueTotals {
  accepted: number;
  duplicate: number;
  rejected: number;
  overLimit: number;
  lines: number;
}

export interface EnqueueStreamOptions {
  /** URLs per Redis batch. @default 1000 */
  readonly batchSize?: number;
  /** Called for each refused line with its 1-based line number. */
  readonly onRejected?: (lineNumber: number, rejected: RejectedUrl) => void;
  /** Called after each batch, for progress output. */
  readonly onBatch?: (totals: Readonly<EnqueueTotals>) => void;
}

/**
 * Enqueues seed URLs from a line source (a file or stdin) in batches, so a
 * file of millions of lines is never held in memory: at most one batch is.
 */
export async function enqueueLines(
  frontier: Frontier,
  lines: AsyncIterable<string>,
  options: EnqueueStreamOptions = {},
): Promise<EnqueueTotals> {
  const batchSize = options.batchSize ?? 1000;
  const totals: EnqueueTotals = { accepted: 0, duplicate: 0, rejected: 0, overLimit: 0, lines: 0 };
  let batch: string[] = [];
  let firstLine = 1;
  const flush = async () => {
    if (batch.length === 0) return;
    const result: AddResult = await frontier.addSeeds(batch);
    totals.accepted += result.accepted;
    totals.duplicate += result.duplicate;
    totals.overLimit += result.overLimit;
    totals.rejected += result.rejected.length;
    for (const rejected of result.rejected) options.onRejected?.(firstLine + rejected.index, rejected);
    firstLine += batch.length;
    batch = [];
    options.onBatch?.(totals);
  };
  for await (const line of lines) {
    totals.lines += 1;
    batch.push(line);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return totals;
}
