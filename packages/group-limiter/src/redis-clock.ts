/**
 * Maps times on the Redis server's clock (where the gate reserves starts) onto
 * this process's monotonic clock (`performance.now()`), the way NTP does: each
 * round trip gives the offset to within half its length, so the shortest recent
 * round trip gives the best estimate. A reply that sat in a busy event loop
 * looks like a long round trip and is not trusted, which is what lets a caller
 * notice that the loop made it late for a reserved start.
 */
export class RedisClock {
  /** Redis ms minus local ms, from the best sample so far. */
  #offsetMs: number | undefined;
  #bestRoundTripMs = Number.POSITIVE_INFINITY;
  #bestAtMs = 0;

  /** Feeds one round trip: local send and receive times and the Redis time the script read in between. */
  observe(sentAtMs: number, receivedAtMs: number, redisNowMs: number): void {
    const roundTripMs = receivedAtMs - sentAtMs;
    if (!Number.isFinite(roundTripMs) || roundTripMs < 0 || !Number.isFinite(redisNowMs)) return;
    // An old best sample counts as 1 ms worse per second of age, so the
    // estimate follows slow drift between the two clocks.
    const agedBestMs = this.#bestRoundTripMs + (receivedAtMs - this.#bestAtMs) / 1000;
    if (this.#offsetMs !== undefined && roundTripMs > agedBestMs) return;
    this.#offsetMs = redisNowMs - (sentAtMs + receivedAtMs) / 2;
    this.#bestRoundTripMs = roundTripMs;
    this.#bestAtMs = receivedAtMs;
  }

  /** The Redis-clock time of a local monotonic time, or undefined before any sample. */
  toRedis(localMs: number): number | undefined {
    return this.#offsetMs === undefined ? undefined : localMs + this.#offsetMs;
  }

  /** The local monotonic time of a Redis-clock time, or undefined before any sample. */
  toLocal(redisMs: number): number | undefined {
    return this.#offsetMs === undefined ? undefined : redisMs - this.#offsetMs;
  }
}
