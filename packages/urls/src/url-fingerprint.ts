import { hash } from 'node:crypto';

/**
 * A short, stable id for a normalised URL: `u` followed by the first 22
 * base64url characters (132 bits) of its SHA-256, 23 characters in all.
 *
 * Used as the BullMQ job id and the seen-set member. BullMQ refuses ids with
 * `:` and treats all-digit ids as its own counters: base64url has no `:`, and
 * the letter prefix rules out an all-digit id.
 *
 * SHA-256 rather than MD5: with the one-shot `crypto.hash` both measured at
 * 1.8-2.9 M hashes/s for 60-character URLs here (CPU SHA extensions; see
 * test/url-speed.bench.ts), so the sounder hash costs nothing.
 *
 * Pass the output of `normalizeUrl`; the input is hashed as given.
 */
export function urlFingerprint(normalizedUrl: string): string {
  return `u${hash('sha256', normalizedUrl, 'base64url').slice(0, 22)}`;
}
