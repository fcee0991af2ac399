import { setTimeout as sleep } from 'node:timers/promises';
import { openFleetAdmin, readCrawlStatus, type FleetAdmin } from '@crawlq/crawl-control';
import { createDeadLetterAdmin, type DeadLetterAdmin } from '@crawlq/dead-letter';
import { waitFor } from '@crawlq/testing';

/** The fields of `crawlq status --json` (the command prints `pages` as `completed`). */
export interface StatusJson {
  readonly done: boolean;
  readonly completed: number;
  readonly backlog: number;
  readonly waiting: number;
  readonly delayed: number;
  readonly active: number;
  readonly failed: number;
  readonly deadLettered: number;
  readonly seen: number;
}

/**
 * A crawl's status read in the test's own process, with the library function
 * `crawlq status` calls (readCrawlStatus): the same numbers without a process
 * start per read. Polling a crawl through the CLI started a Node process every
 * half second, each about a second of CPU: on two cores the polls took CPU
 * from the crawl they waited for. Tests that check the command itself still
 * run it.
 */
export class StatusReader implements AsyncDisposable {
  readonly #redisUrl: string;
  readonly #namespace: string;
  #opened: Promise<{ admin: FleetAdmin; deadLetters: DeadLetterAdmin }> | undefined;

  constructor(redisUrl: string, namespace: string) {
    this.#redisUrl = redisUrl;
    this.#namespace = namespace;
  }

  async read(): Promise<StatusJson> {
    this.#opened ??= (async () => ({
      admin: await openFleetAdmin(this.#redisUrl, this.#namespace),
      deadLetters: createDeadLetterAdmin({ connection: { url: this.#redisUrl }, namespace: this.#namespace }),
    }))();
    const { admin, deadLetters } = await this.#opened;
    // A crawl of several shards records its layout when it begins: follow it as the dashboard does.
    await admin.followLayout();
    const status = await readCrawlStatus(admin, () => deadLetters.count());
    const { backlog, waiting, delayed, active, failed, deadLettered, done, pages, seen } = status;
    return { backlog, waiting, delayed, active, completed: pages, failed, deadLettered, done, seen };
  }

  /**
   * Resolves once the crawl is done twice in a row with the same seen count,
   * as `crawl` decides it (shards are read one after another), and at least
   * one page completed.
   */
  async waitUntilDone(options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<StatusJson> {
    let previous: StatusJson | undefined;
    return waitFor(
      async () => {
        const status = await this.read();
        const done = status.done && status.completed > 0;
        const confirmed = done && previous?.done === true && previous.seen === status.seen;
        previous = done ? status : undefined;
        return confirmed ? status : undefined;
      },
      { timeoutMs: options.timeoutMs ?? 120_000, intervalMs: options.intervalMs ?? 200, what: options.what ?? 'the crawl to finish' },
    );
  }

  async close(): Promise<void> {
    const opened = this.#opened;
    this.#opened = undefined;
    if (opened === undefined) return;
    const { admin, deadLetters } = await opened.catch(() => ({ admin: undefined, deadLetters: undefined }));
    // A test may have stopped its Redis already: a quit it cannot answer must not hold the test up.
    const closed = Promise.all([admin?.close(), deadLetters?.close()]).catch(() => undefined);
    await Promise.race([closed, sleep(5_000, undefined, { ref: false })]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
