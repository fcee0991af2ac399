import { DEFAULT_MAX_URL_LENGTH } from '@crawlq/urls';

/**
 * Caps on what one page can put into its record: a 9 MB page made a
 * 19 MB record. Lengths are in code points, so an emoji counts once and is
 * never split into half a surrogate pair.
 */
export const RECORD_CAPS = Object.freeze({
  /** Code points of `title`. */
  title: 1_000,
  /** Code points of `description`. */
  description: 2_000,
  /** Code points of each value of a user field. */
  fieldValue: 10_000,
  /** Values of a field with `all: true`. */
  fieldValues: 1_000,
  /** Code points of `lang`: a language tag is a few dozen at most (RFC 5646 asks room for 35). */
  lang: 100,
  /**
   * Characters of `canonical`, as for any URL crawlq keeps (the normaliser's
   * limit). A URL cut short names another page, so a longer one is dropped (null).
   */
  canonical: DEFAULT_MAX_URL_LENGTH,
});

/**
 * `text` cut to at most `max` code points, and whether it was cut. Never
 * ends in a lone high surrogate. Costs O(max), not O(text.length).
 */
export function capCodePoints(text: string, max: number): { readonly text: string; readonly cut: boolean } {
  // Fewer UTF-16 units than the cap means fewer code points too.
  if (text.length <= max) return { text, cut: false };
  let end = 0;
  for (let points = 0; points < max && end < text.length; points++) {
    end += isSurrogatePair(text, end) ? 2 : 1;
  }
  return end >= text.length ? { text, cut: false } : { text: text.slice(0, end), cut: true };
}

function isSurrogatePair(text: string, index: number): boolean {
  const high = text.charCodeAt(index);
  if (high < 0xd800 || high > 0xdbff) return false;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdfff;
}

/** Collects the names of the record's fields that a cap shortened, in the record's order. */
export class TruncatedFields {
  readonly #names: string[] = [];

  /** `text` capped at `max` code points; notes `name` when cut. Null stays null. */
  cap(name: string, text: string, max: number): string;
  cap(name: string, text: string | null, max: number): string | null;
  cap(name: string, text: string | null, max: number): string | null {
    if (text === null) return null;
    const capped = capCodePoints(text, max);
    if (capped.cut) this.note(name);
    return capped.text;
  }

  note(name: string): void {
    if (!this.#names.includes(name)) this.#names.push(name);
  }

  get names(): string[] {
    return [...this.#names];
  }
}
