import { createSeededRandom } from '@crawlq/demo-site';

/** Every printable ASCII character, space to tilde. */
export const PRINTABLE_ASCII = Array.from({ length: 95 }, (_, index) => String.fromCharCode(32 + index)).join('');

/** The printable characters that are neither letters nor digits: the ones a URL may trip on. */
export const PRINTABLE_SPECIALS = PRINTABLE_ASCII.replace(/[A-Za-z0-9]/g, '');

/** A seeded generator: the same seed gives the same sequence on every run and machine (the demo site's own). */
export const seededRandom: (seed: number) => () => number = createSeededRandom;

export interface GeneratedPasswordOptions {
  readonly seed: number;
  /** How many passwords. */
  readonly count: number;
  /** Printable characters each password must hold (each also somewhere in a generated one). @default '' */
  readonly including?: string;
  /** @default 8 */
  readonly minLength?: number;
  /** @default 24 */
  readonly maxLength?: number;
  /** What the other characters are drawn from. @default PRINTABLE_ASCII */
  readonly from?: string;
}

/**
 * `count` passwords of printable ASCII from `seed`, each with a letter and a
 * digit and the characters of `including` at random places: the rest drawn
 * from `from` (every printable character) alike. Reproducible: a failure names its seed.
 */
export function generatedPasswords(options: GeneratedPasswordOptions): string[] {
  const random = seededRandom(options.seed);
  const pick = (text: string) => text.charAt(Math.floor(random() * text.length));
  const minLength = options.minLength ?? 8;
  const maxLength = options.maxLength ?? 24;
  const passwords: string[] = [];
  for (let index = 0; index < options.count; index++) {
    const length = minLength + Math.floor(random() * (maxLength - minLength + 1));
    const chars = [pick('abcdefghijklmnopqrstuvwxyz'), pick('0123456789')];
    while (chars.length < length) chars.push(pick(options.from ?? PRINTABLE_ASCII));
    for (const char of options.including ?? '') chars.splice(Math.floor(random() * (chars.length + 1)), 0, char);
    passwords.push(chars.join(''));
  }
  return passwords;
}

/** `text` in an order drawn from `random` (Fisher-Yates). */
export function shuffled(text: string, random: () => number): string {
  const chars = [...text];
  for (let index = chars.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [chars[index], chars[other]] = [chars[other] ?? '', chars[index] ?? ''];
  }
  return chars.join('');
}
