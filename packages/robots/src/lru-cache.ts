/**
 * A least-recently-used map bounded by entry count and by total weight
 * (an estimate of bytes held), whichever is reached first.
 */
export class LruCache<V> {
  readonly #entries = new Map<string, { value: V; weight: number }>();
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  #weight = 0;

  constructor(limits: { maxEntries: number; maxWeight: number }) {
    this.#maxEntries = limits.maxEntries;
    this.#maxWeight = limits.maxWeight;
  }

  /** Number of entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value for `key`, marking it most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    // Map keeps insertion order: re-inserting moves the key to the young end.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value`, then evicts the least recently used entries over the limits. */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldKey, oldEntry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#weight <= this.#maxWeight) break;
      // Keep the entry just stored even when it alone is over the weight limit.
      if (oldKey === key) break;
      this.#entries.delete(oldKey);
      this.#weight -= oldEntry.weight;
    }
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }

  /** Removes everything. */
  clear(): void {
    this.#entries.clear();
    this.#weight = 0;
  }
}
