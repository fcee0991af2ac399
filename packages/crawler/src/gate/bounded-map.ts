/**
 * A Map used as a bounded cache: `remember` moves the key to the young end (a
 * Map keeps insertion order), and past `max` entries the oldest goes. For
 * per-host memories a broad crawl of millions of hosts must not let grow.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly #max: number;

  constructor(max: number) {
    super();
    this.#max = max;
  }

  remember(key: K, value: V): void {
    this.delete(key);
    if (this.size >= this.#max) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    this.set(key, value);
  }
}
