/** What an asker gets from a {@link BoundedRead}: the last good value, and whether reads work now. */
export interface BoundedReadResult<T> {
  /** The value of the last read that succeeded; undefined before the first one. */
  readonly value: T | undefined;
  /** When that read finished (ms since the epoch); undefined before the first one. */
  readonly readAt: number | undefined;
  /**
   * Reads work: the last one finished well and none has gone unanswered past
   * the timeout since. False before the first good read.
   */
  readonly ok: boolean;
  /** Why the last read failed, when `ok` is false because of a failure. */
  readonly error: Error | undefined;
}

/**
 * A read from a server that may stop answering (Redis frozen, or gone with
 * its connection left open): one read at a time, each ended by its own
 * timeout, the last good value kept. Askers wait for a read only as long as
 * they choose, so what answers them (a scrape, a probe) has a deadline of its
 * own whatever the server does.
 */
export class BoundedRead<T> {
  readonly #read: () => Promise<T>;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  readonly #what: string;
  #last: { readonly value: T; readonly at: number } | undefined;
  #lastFailed: Error | undefined;
  #inFlight: { readonly startedAt: number; readonly done: Promise<T | undefined> } | undefined;

  /**
   * @param options.maxAgeMs a value younger than this is served without a new read
   * @param options.timeoutMs a read unanswered this long counts as failed; the next asker starts another
   * @param options.what what is read, for the timeout's message
   */
  constructor(read: () => Promise<T>, options: { readonly maxAgeMs: number; readonly timeoutMs: number; readonly what: string }) {
    this.#read = read;
    this.#maxAgeMs = options.maxAgeMs;
    this.#timeoutMs = options.timeoutMs;
    this.#what = options.what;
  }

  /** A value read within `maxAgeMs`, or a new read's; rejects when the read fails or times out. */
  async read(): Promise<T> {
    const value = this.#fresh() ?? (await this.#refresh());
    if (value !== undefined) return value;
    throw this.#lastFailed ?? new Error(`${this.#what} failed`);
  }

  /**
   * The last good value, after waiting at most `waitMs` for a read this call
   * starts (or one under way): settles within `waitMs` and never rejects.
   */
  async current(waitMs: number): Promise<BoundedReadResult<T>> {
    if (this.#fresh() === undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#refresh(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return this.status();
  }

  /** What `current` answers, without a read or a wait. */
  status(): BoundedReadResult<T> {
    // Settled by the timeout's own timer; checked here too, as a timer can run late on a busy process.
    const overdue = this.#inFlight !== undefined && Date.now() - this.#inFlight.startedAt >= this.#timeoutMs;
    const error = this.#lastFailed ?? (overdue ? this.#timeoutError() : undefined);
    return { value: this.#last?.value, readAt: this.#last?.at, ok: this.#last !== undefined && error === undefined, error };
  }

  #fresh(): T | undefined {
    return this.#last && Date.now() - this.#last.at < this.#maxAgeMs ? this.#last.value : undefined;
  }

  #timeoutError(): Error {
    return new Error(`no answer to the ${this.#what} within ${this.#timeoutMs} ms`);
  }

  /** Starts a read unless one is under way; settles with its value, or undefined when it failed or timed out. */
  #refresh(): Promise<T | undefined> {
    if (this.#inFlight) return this.#inFlight.done;
    let timer: NodeJS.Timeout | undefined;
    // A frozen server never answers: the timeout, not the reply, ends the
    // read, so the next asker can start another (a late reply is dropped).
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.#timeoutError()), this.#timeoutMs);
      timer.unref();
    });
    const done = Promise.race([this.#read(), timeout])
      .then(
        (value) => {
          this.#last = { value, at: Date.now() };
          this.#lastFailed = undefined;
          return value;
        },
        (error: unknown) => {
          this.#lastFailed = error instanceof Error ? error : new Error(String(error));
          return undefined;
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.#inFlight = undefined;
      });
    this.#inFlight = { startedAt: Date.now(), done };
    return done;
  }
}
