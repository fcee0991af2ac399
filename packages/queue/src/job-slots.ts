/**
 * A worker process's cap on the jobs at work at once (its --concurrency): its
 * BullMQ Workers (one per shard's queue) may take more jobs than that, and a
 * job waits here for a slot before it runs, and gives it up while it only
 * sleeps (`idle`). A job waiting keeps its lock (BullMQ renews the locks of
 * every job its processor holds), so it is never taken twice; another process
 * may wait on its slot for a moment longer, nothing more.
 */
export class JobSlots {
  readonly #capacity: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`job slots: capacity must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
  }

  /** Runs `task` once a slot is free (first come, first served), and frees the slot when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#take();
    try {
      return await task();
    } finally {
      this.#give();
    }
  }

  /**
   * Runs `wait` with the caller's slot given up (the caller holds one, from
   * `run`), and takes a slot again before it returns: a job asleep until its
   * next start needs no slot meanwhile.
   */
  async idle<T>(wait: () => Promise<T>): Promise<T> {
    this.#give();
    try {
      return await wait();
    } finally {
      await this.#take();
    }
  }

  /** A slot, once one is free (first come, first served). */
  async #take(): Promise<void> {
    if (this.#used >= this.#capacity) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#used += 1;
  }

  /** The slot back: straight to the next waiter, so #used never drops and rises again in between. */
  #give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#used -= 1;
  }

  /** Jobs running now (for tests). */
  get running(): number {
    return this.#used;
  }
}
