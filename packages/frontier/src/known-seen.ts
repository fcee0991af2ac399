/**
 * Fingerprints this process has seen Redis confirm as seen (admitted now, or
 * admitted before), so a link found again is counted as a duplicate here
 * instead of being sent to the admission script. Most links a crawl finds
 * point at pages it already has (each page of a site is linked from many), so
 * this takes most of the seen-set lookups, and whole admission calls, off Redis.
 *
 * Sound because a crawl's seen-set only grows: nothing removes a URL from it
 * while the namespace lives, so a fingerprint once confirmed stays seen. What
 * Redis has not confirmed (over a budget, or not sent yet) is never held.
 *
 * Bounded: two generations of at most `capacity / 2` each. When the young one
 * fills, the old one is dropped; a hit in the old one moves to the young, so
 * URLs linked from everywhere (navigation) stay, and memory stays flat however
 * long the crawl runs.
 */
export class KnownSeen {
  readonly #generationSize: number;
  #young = new Set<string>();
  #old = new Set<string>();

  constructor(capacity: number) {
    this.#generationSize = Math.max(0, Math.floor(capacity / 2));
  }

  has(fingerprint: string): boolean {
    if (this.#young.has(fingerprint)) return true;
    if (!this.#old.has(fingerprint)) return false;
    this.add(fingerprint);
    return true;
  }

  add(fingerprint: string): void {
    if (this.#generationSize === 0) return;
    if (this.#young.size >= this.#generationSize) {
      this.#old = this.#young;
      this.#young = new Set();
    }
    this.#young.add(fingerprint);
  }

  /** Fingerprints held (at most the capacity). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }
}
