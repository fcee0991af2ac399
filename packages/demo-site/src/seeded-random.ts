/** A deterministic pseudo-random generator: every call returns the next number in [0, 1). */
export type SeededRandom = () => number;

/**
 * Creates a small, fast, deterministic pseudo-random generator (mulberry32).
 * The same seed always yields the same sequence, on every platform, so
 * generated sites, tests and benchmarks are reproducible.
 *
 * @param seed Any number; it is reduced to an unsigned 32-bit integer
 *   (fractions are truncated, non-finite values count as 0).
 */
export function createSeededRandom(seed: number): SeededRandom {
  let state = toUint32(seed);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Combines numbers into one well-mixed 32-bit seed, so every page of a site
 * gets its own independent stream: a page can then be generated on its own,
 * in any order, without replaying the streams of the pages before it.
 */
export function mixSeed(parts: readonly number[]): number {
  let hash = 0x9e3779b9;
  for (const part of parts) {
    hash = fmix32(Math.imul(hash ^ toUint32(part), 0x85ebca6b) + 0x6b43a9b5);
  }
  return hash;
}

// The murmur3 finaliser: every input bit affects every output bit.
function fmix32(value: number): number {
  let hash = value >>> 0;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

function toUint32(value: number): number {
  return Number.isFinite(value) ? Math.trunc(value) >>> 0 : 0;
}
