/** Pages per second over a recent interval, when one is known. */
export interface PageRateReading {
  readonly perSecond: number;
  /** Length of the interval it was measured over (ms). */
  readonly overMs: number;
}

/**
 * Pages per second from the fleet's page counter, sampled whenever the
 * dashboard reads it (and once at start): no worker has to keep a rate, and
 * any dashboard process computes the same figure from the same counter.
 */
export class PageRate {
  readonly #windowMs: number;
  #samples: { at: number; pages: number }[] = [];

  constructor(windowMs = 60_000) {
    this.#windowMs = windowMs;
  }

  add(at: number, pages: number): void {
    const last = this.#samples.at(-1);
    // The counter went back: the namespace was cleared; earlier samples say nothing about now.
    if (last !== undefined && pages < last.pages) this.#samples = [];
    this.#samples.push({ at, pages });
    // Keep one sample at or before the window's start, so the interval spans the whole window.
    while (this.#samples.length > 2 && (this.#samples[1]?.at ?? at) <= at - this.#windowMs) this.#samples.shift();
  }

  /** `null` until two samples lie at least a second apart. */
  reading(): PageRateReading | null {
    const first = this.#samples[0];
    const last = this.#samples.at(-1);
    if (first === undefined || last === undefined || last.at - first.at < 1_000) return null;
    return { perSecond: ((last.pages - first.pages) * 1000) / (last.at - first.at), overMs: last.at - first.at };
  }
}
