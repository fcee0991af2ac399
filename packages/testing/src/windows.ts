/**
 * The largest number of `times` inside any half-open window [t, t + windowMs)
 * that starts at one of them: what a server counting starts per window would
 * count at its busiest, the bound every politeness test judges.
 */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let end = 0;
  sorted.forEach((from, start) => {
    while (end < sorted.length && (sorted[end] ?? Number.POSITIVE_INFINITY) < from + windowMs) end += 1;
    best = Math.max(best, end - start);
  });
  return best;
}

/**
 * When a server saw a request, as far as its own event loop can tell: the
 * handler ran at `at`, and the bytes came in no earlier than `notBefore` (a
 * loop that was busy or not scheduled meanwhile handles them late, and two
 * arrivals far apart can then look simultaneous). Epoch ms.
 */
export interface Arrival {
  readonly at: number;
  readonly notBefore: number;
}

/**
 * Times a server's arrivals with how late its own event loop could have seen
 * them: a 1 ms interval ticks while the loop runs freely, and a request whose
 * handler runs after a gap in the ticks (the loop busy with other work, or the
 * process not scheduled on a loaded machine) may have arrived as early as the
 * tick before that gap. Data that was there before a tick would have been read
 * in the poll phase that followed it, so the second-to-last tick bounds the
 * arrival from below.
 */
export class ArrivalClock {
  #lastTick = Date.now();
  #tickBefore = this.#lastTick;
  #longestGapMs = 0;
  /** Every tick, kept only when asked for (see {@link notBeforeAt}). */
  readonly #ticks: number[] | undefined;
  readonly #timer: NodeJS.Timeout;

  /** `keepTicks`: remember every tick, so that arrivals stamped elsewhere can be bounded afterwards (a few seconds' worth: 1 ms each). */
  constructor(options: { keepTicks?: boolean } = {}) {
    this.#ticks = options.keepTicks === true ? [this.#lastTick] : undefined;
    this.#timer = setInterval(() => {
      const now = Date.now();
      this.#longestGapMs = Math.max(this.#longestGapMs, now - this.#lastTick);
      this.#tickBefore = this.#lastTick;
      this.#lastTick = now;
      this.#ticks?.push(now);
    }, 1);
    this.#timer.unref();
  }

  /** Called first thing in a request handler. */
  arrival(): Arrival {
    return { at: Date.now(), notBefore: this.#tickBefore };
  }

  /**
   * The earliest a request whose handler stamped it at `at` (epoch ms, by this
   * process's loop) can have arrived: the tick before the last tick up to
   * `at`, as {@link arrival} gives it at the time. For a server that stamps
   * its own requests (a site that knows no clock); needs `keepTicks`.
   */
  notBeforeAt(at: number): number {
    const ticks = this.#ticks;
    if (ticks === undefined) throw new Error('ArrivalClock.notBeforeAt needs a clock made with { keepTicks: true }');
    // Index of the last tick at or before `at` (binary search: ticks only grow).
    let low = 0;
    let high = ticks.length - 1;
    if ((ticks[0] ?? Number.POSITIVE_INFINITY) > at) return Number.NEGATIVE_INFINITY;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if ((ticks[middle] ?? Number.POSITIVE_INFINITY) <= at) low = middle;
      else high = middle - 1;
    }
    return Math.min(ticks[Math.max(0, low - 1)] ?? at, at);
  }

  /** A stamp taken elsewhere (see {@link notBeforeAt}) as an arrival. */
  arrivalOf(at: number): Arrival {
    return { at, notBefore: this.notBeforeAt(at) };
  }

  /** The longest the loop went without a tick so far (ms): how unsure the arrival times could be. */
  get longestGapMs(): number {
    return Math.max(this.#longestGapMs, Date.now() - this.#lastTick);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * The most arrivals that were certainly inside one window [t, t + windowMs):
 * those whose earliest and latest possible times both fall in it. When the
 * server's loop ran freely this is {@link maxInWindow} of the handler times;
 * across a stall it counts only what the stall cannot explain, so a politeness
 * bound judged with it fails on a real burst, not on the judge's own lateness.
 */
export function maxCertainlyInWindow(arrivals: readonly Arrival[], windowMs: number): number {
  let best = 0;
  for (const from of arrivals) {
    const start = Math.min(from.notBefore, from.at);
    let inside = 0;
    for (const other of arrivals) if (Math.min(other.notBefore, other.at) >= start && other.at < start + windowMs) inside += 1;
    best = Math.max(best, inside);
  }
  return best;
}

/**
 * For each two arrivals in a row (by handler time), the most they can have
 * been apart: the later one's handler time against the earliest the first
 * can have come. A spacing judged with these fails on a real squeeze, not on
 * a stall that stamped the first one late.
 */
export function widestGaps(arrivals: readonly Arrival[]): number[] {
  const sorted = [...arrivals].sort((a, b) => a.at - b.at);
  const gaps: number[] = [];
  let previous: Arrival | undefined;
  for (const next of sorted) {
    if (previous) gaps.push(next.at - Math.min(previous.notBefore, previous.at));
    previous = next;
  }
  return gaps;
}

/**
 * {@link maxCertainlyInWindow} of stamps a site took with this process's
 * loop (handler times, epoch ms), each bounded by `clock`, a clock made with
 * `keepTicks` before the first of them.
 */
export function maxStampedInWindow(clock: ArrivalClock, stamps: readonly number[], windowMs: number): number {
  return maxCertainlyInWindow(stamps.map((at) => clock.arrivalOf(at)), windowMs);
}
