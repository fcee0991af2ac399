import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Name of the hidden form field that carries the token. */
export const CSRF_FIELD = '_csrf';

/**
 * A per-process secret embedded in every form of the dashboard and required
 * on every form POST: another site can make a browser send a POST, but it
 * cannot read our pages to learn the token.
 */
export class CsrfToken {
  readonly value = randomBytes(32).toString('base64url');
  readonly #digest = createHash('sha256').update(this.value).digest();

  /** Constant-time check of a submitted token. */
  matches(candidate: unknown): boolean {
    if (typeof candidate !== 'string') return false;
    return timingSafeEqual(createHash('sha256').update(candidate).digest(), this.#digest);
  }
}
