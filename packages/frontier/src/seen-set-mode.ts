import { FrontierArgumentError } from './errors.js';

/**
 * How the frontier remembers which URLs it has admitted.
 * - `exact`: every URL fingerprint is stored (about 25 bytes per URL in Redis);
 *   never mistakes a new URL for a seen one.
 * - `bloom`: a Bloom filter of fixed size, sized for `expectedUrls` at
 *   `falsePositiveRate` (about 1.97 bytes per expected URL at 0.001), allocated
 *   up front. A false positive makes the frontier skip a new URL as if it had
 *   been seen. Past `expectedUrls` the rate climbs fast: a filter sized for
 *   0.001 gives about 0.010 at 1.5 times and 0.043 at twice as many URLs.
 */
export type SeenSetMode =
  | { readonly mode: 'exact' }
  | {
      readonly mode: 'bloom';
      readonly expectedUrls: number;
      readonly falsePositiveRate: number;
      /**
       * Largest bitmap key, in bits; the filter is split over as many keys as it needs.
       * @default MAX_BLOOM_PART_BITS (64 MiB)
       */
      readonly maxPartBits?: number | undefined;
    };

/**
 * The shape of a Bloom filter in Redis: `parts` bitmaps of `partBits` bits
 * each. It is a blocked Bloom filter: a URL's `hashes` bits all lie in one block
 * of {@link BLOOM_BLOCK_BITS} bits, so a lookup reads one small range (one Redis
 * call per URL instead of one per bit), at the cost of a few percent more bits
 * for the same false-positive rate.
 */
export interface BloomGeometry {
  /** Total bits (m): whole blocks, spread evenly over the parts. */
  readonly bits: number;
  /** Bits set per URL (k). */
  readonly hashes: number;
  /** Number of bitmap keys. */
  readonly parts: number;
  /** Bits in each bitmap key (a whole number of blocks). */
  readonly partBits: number;
}

/** The default: exact dedupe. */
export const DEFAULT_SEEN_SET_MODE: SeenSetMode = Object.freeze({ mode: 'exact' });

/**
 * Largest bitmap key. A Redis string may hold 512 MiB, but a part is allocated
 * (and zeroed) whole on its first write, blocking the server meanwhile: 64 MiB
 * keeps that well under a second.
 */
export const MAX_BLOOM_PART_BITS = 64 * 1024 * 1024 * 8;

/**
 * Bits per block: 64 bytes, read with one GETRANGE and rewritten with one
 * SETRANGE. Larger blocks need fewer extra bits (2048-bit blocks: 3 % at 0.001
 * against 9 %) but rebuilding them in Lua costs more than the memory is worth.
 */
export const BLOOM_BLOCK_BITS = 512;

/**
 * Sizes a blocked Bloom filter. k = round(m0 / n * ln 2) for the classic size
 * m0 = -n ln p / (ln 2)^2; m starts at m0 and grows by 0.5 % steps until the
 * blocked filter's rate ({@link bloomFalsePositiveRate}) at n URLs is at most p
 * (about 9 % more bits at p = 0.001, 17 % at 0.0001); then it is split into bitmaps of at most
 * `maxPartBits` bits.
 * @throws FrontierArgumentError unless `expectedUrls` is a whole number >= 1,
 *   0 < `falsePositiveRate` < 0.5 and `maxPartBits` a whole number from
 *   BLOOM_BLOCK_BITS to 2^32
 */
export function bloomGeometry(expectedUrls: number, falsePositiveRate: number, maxPartBits = MAX_BLOOM_PART_BITS): BloomGeometry {
  if (!Number.isSafeInteger(expectedUrls) || expectedUrls < 1) {
    throw new FrontierArgumentError(`seenSet.expectedUrls must be a whole number >= 1, got ${expectedUrls}`, 'seenSet.expectedUrls');
  }
  if (!(falsePositiveRate > 0 && falsePositiveRate < 0.5)) {
    throw new FrontierArgumentError(
      `seenSet.falsePositiveRate must be between 0 and 0.5 (exclusive), got ${falsePositiveRate}`,
      'seenSet.falsePositiveRate',
    );
  }
  if (!Number.isSafeInteger(maxPartBits) || maxPartBits < BLOOM_BLOCK_BITS || maxPartBits > 2 ** 32) {
    throw new FrontierArgumentError(
      `seenSet.maxPartBits must be a whole number from ${BLOOM_BLOCK_BITS} to 2^32, got ${maxPartBits}`,
      'seenSet.maxPartBits',
    );
  }
  const classic = Math.ceil((-expectedUrls * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
  const hashes = Math.max(1, Math.round((classic / expectedUrls) * Math.LN2));
  let bits = classic;
  while (bloomFalsePositiveRate({ bits, hashes }, expectedUrls) > falsePositiveRate) bits = Math.ceil(bits * 1.005);
  const blocks = Math.ceil(bits / BLOOM_BLOCK_BITS);
  const parts = Math.ceil(blocks / Math.floor(maxPartBits / BLOOM_BLOCK_BITS));
  const partBits = Math.ceil(blocks / parts) * BLOOM_BLOCK_BITS;
  return { bits: parts * partBits, hashes, parts, partBits };
}

/**
 * The false-positive rate of a blocked Bloom filter of `geometry` after
 * `inserted` distinct URLs. A block holding i URLs has a share
 * f = 1 - (1 - 1/B)^(k i) of its bits set; a lookup probes k positions that
 * may coincide (B is small), so it tests d <= k distinct bits and passes with
 * f^d. Averaged over the spread of d and over the Poisson spread of URLs over
 * blocks.
 */
export function bloomFalsePositiveRate(geometry: Pick<BloomGeometry, 'bits' | 'hashes'>, inserted: number): number {
  const k = geometry.hashes;
  const perBlock = (inserted * BLOOM_BLOCK_BITS) / geometry.bits;
  if (perBlock === 0) return 0;
  const distinct = distinctProbeOdds(k, BLOOM_BLOCK_BITS);
  const miss = Math.log1p(-1 / BLOOM_BLOCK_BITS);
  const end = Math.ceil(perBlock + 12 * Math.sqrt(perBlock) + 20);
  // Poisson weights in log space: e^-perBlock underflows for dense filters.
  let logWeight = -perBlock;
  let rate = 0;
  for (let i = 0; i <= end; i += 1) {
    if (i > 0) logWeight += Math.log(perBlock) - Math.log(i);
    const filled = 1 - Math.exp(miss * k * i);
    let pass = 0;
    distinct.forEach((odds, d) => (pass += odds * filled ** d));
    rate += Math.exp(logWeight) * pass;
  }
  return rate;
}

/** odds[d]: the chance that k uniform probes into `size` positions hit exactly d distinct ones. */
function distinctProbeOdds(k: number, size: number): number[] {
  let odds = [1];
  for (let probe = 0; probe < k; probe += 1) {
    const next = new Array<number>(odds.length + 1).fill(0);
    odds.forEach((p, d) => {
      next[d] = (next[d] ?? 0) + (p * d) / size;
      next[d + 1] = (next[d + 1] ?? 0) + (p * (size - d)) / size;
    });
    odds = next;
  }
  return odds;
}
