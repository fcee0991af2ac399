import { FrontierArgumentError } from './frontier-errors.js';

/**
 * How the frontier remembers which URLs it has admitted.
 * - `exact`: every URL fingerprint is stored (about 25 bytes per URL in Redis);
 *   never mistakes a new URL for a seen one.
 * - `bloom`: a Bloom filter of fixed size, sized for `expectedUrls` at
 *   `falsePositiveRate` (about 1.8 bytes per expected URL at 0.001), allocated
 *   up front. A false positive makes the frontier skip a new URL as if it had
 *   been seen. Past `expectedUrls` the rate climbs fast: a filter sized for
 *   0.001 gives about 0.013 at 1.5 times and 0.057 at twice as many URLs.
 */
export type SeenSetMode =
  | { readonly mode: 'exact' }
  | { readonly mode: 'bloom'; readonly expectedUrls: number; readonly falsePositiveRate: number };

/** The shape of a Bloom filter in Redis: `parts` bitmaps of `partBits` bits each, `hashes` bits per URL. */
export interface BloomGeometry {
  /** Total bits (m), rounded up to a whole number of parts. */
  readonly bits: number;
  /** Bits set per URL (k). */
  readonly hashes: number;
  /** Number of bitmap keys. */
  readonly parts: number;
  /** Bits in each bitmap key (at most 64 MiB worth). */
  readonly partBits: number;
}

/** The default: exact dedupe. */
export const DEFAULT_SEEN_SET_MODE: SeenSetMode = Object.freeze({ mode: 'exact' });

/**
 * Largest bitmap key. A Redis string may hold 512 MiB, but the first SETBIT far
 * into a fresh key allocates (and zeroes) the whole string at once, blocking the
 * server meanwhile: 64 MiB keeps that well under a second.
 */
export const MAX_BLOOM_PART_BITS = 64 * 1024 * 1024 * 8;

/**
 * Sizes a Bloom filter: m = -n ln p / (ln 2)^2 bits and k = round(m / n * ln 2)
 * hashes, split into bitmaps of at most {@link MAX_BLOOM_PART_BITS} bits.
 * @throws FrontierArgumentError unless `expectedUrls` is a whole number >= 1 and
 *   0 < `falsePositiveRate` < 0.5
 */
export function bloomGeometry(expectedUrls: number, falsePositiveRate: number): BloomGeometry {
  if (!Number.isSafeInteger(expectedUrls) || expectedUrls < 1) {
    throw new FrontierArgumentError(`seenSet.expectedUrls must be a whole number >= 1, got ${expectedUrls}`, 'seenSet.expectedUrls');
  }
  if (!(falsePositiveRate > 0 && falsePositiveRate < 0.5)) {
    throw new FrontierArgumentError(
      `seenSet.falsePositiveRate must be between 0 and 0.5 (exclusive), got ${falsePositiveRate}`,
      'seenSet.falsePositiveRate',
    );
  }
  const ideal = Math.ceil((-expectedUrls * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
  const hashes = Math.max(1, Math.round((ideal / expectedUrls) * Math.LN2));
  const parts = Math.ceil(ideal / MAX_BLOOM_PART_BITS);
  const partBits = Math.ceil(ideal / parts);
  return { bits: parts * partBits, hashes, parts, partBits };
}

/** The false-positive rate a filter of `geometry` has after `inserted` distinct URLs: (1 - e^(-kn/m))^k. */
export function bloomFalsePositiveRate(geometry: Pick<BloomGeometry, 'bits' | 'hashes'>, inserted: number): number {
  return (1 - Math.exp((-geometry.hashes * inserted) / geometry.bits)) ** geometry.hashes;
}
