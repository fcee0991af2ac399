import type { CheerioAPI } from 'cheerio/slim';
import type { DomNode } from './dom-node.js';

/** Builds a cheerio document from HTML text, or from parsed nodes to adopt. */
export type HtmlLoader = (content: string | DomNode[]) => CheerioAPI;

/** Documents with more open tags than this are parsed in slices. */
export const SLICE_THRESHOLD_TAGS = 20_000;
/** Open tags per slice (bounds the nesting depth any one parse can reach). */
export const TAGS_PER_SLICE = 5_000;

// Every open tag starts like this (htmlparser2 opens a tag only at "<" and
// an ASCII letter), so counting these bounds the depth a slice can reach;
// close tags cannot deepen it and are not counted. Comments are matched to
// avoid cutting inside them.
const TAG_START = /<(?:!--|[a-zA-Z])/g;
// Elements htmlparser2 reads as raw text; cutting inside them would turn the
// rest of a script into markup.
const RAW_TEXT_OPEN = /^<(script|style|title|textarea|xmp)[\s/>]/i;

/**
 * Parses a document, slicing very large ones.
 *
 * Why slice: htmlparser2 keeps its open-element stack with `Array.unshift`,
 * so each open tag costs O(depth) and unclosed tags (hostile, or an old
 * generator's `<font>` per line) make parsing quadratic: 50k nested `<div>`
 * took 5 s, and parse5 is worse (72 s, scope checks walk the stack). A
 * document with more than 20k open tags is cut into slices of 5k, each
 * parsed alone, and their nodes adopted into one document, so the cost
 * stays linear. Cuts fall only before a tag, never inside a comment or
 * `<script>`/`<style>`-like raw text (unless it runs on for another 5k tags,
 * as a never-closed one does), so ordinary pages yield the same links;
 * elements left open at a cut are closed there, so selectors that rely on
 * structure (`body > main a`) see only the first slice's structure.
 */
export function parseHtml(text: string, load: HtmlLoader): CheerioAPI {
  const cuts = sliceOffsets(text);
  if (cuts.length === 0) return load(text);
  const nodes: DomNode[] = [];
  let start = 0;
  for (const end of [...cuts, text.length]) {
    const root = load(text.slice(start, end)).root().get(0) as unknown as DomNode | undefined;
    for (const child of root?.children ?? []) {
      // Detached first: cheerio would otherwise remove each node from its old
      // parent with a linear search, quadratic again.
      child.parent = null;
      nodes.push(child);
    }
    start = end;
  }
  return load(nodes);
}

/** Offsets to cut at, empty when the document is small enough to parse whole. */
function sliceOffsets(text: string): number[] {
  const cuts: number[] = [];
  let tags = 0;
  let sinceCut = 0;
  // End of the comment or raw-text element we are in (no cuts before it).
  let protectedUntil = -1;
  const closes = new CloseFinder(text);
  const pattern = new RegExp(TAG_START.source, 'g');
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const at = match.index;
    const inside = at < protectedUntil;
    // Inside a comment or script, wait for its end, but not forever: a
    // never-closed (or self-closed, which htmlparser2 honours) <script>
    // must not turn the rest of the page into one quadratic slice.
    if (sinceCut >= TAGS_PER_SLICE && (!inside || sinceCut >= 2 * TAGS_PER_SLICE)) {
      cuts.push(at);
      sinceCut = 0;
      protectedUntil = Math.min(protectedUntil, at);
    }
    tags++;
    sinceCut++;
    if (at < protectedUntil) continue;
    if (match[0] === '<!--') {
      const close = closes.find('-->', at + 4);
      protectedUntil = close === -1 ? text.length : close + 3;
      continue;
    }
    const raw = RAW_TEXT_OPEN.exec(text.slice(at, at + 10))?.[1]?.toLowerCase();
    if (raw !== undefined) {
      const close = closes.find(`</${raw}`, at + raw.length + 1);
      protectedUntil = close === -1 ? text.length : close;
    }
  }
  return tags > SLICE_THRESHOLD_TAGS ? cuts : [];
}

/**
 * Case-insensitive search for closing sequences, remembering results so that
 * repeated opens inside one region do not rescan it (which would make a page
 * full of unclosed `<script>` tags quadratic).
 */
class CloseFinder {
  readonly #text: string;
  readonly #found = new Map<string, number>();

  constructor(text: string) {
    this.#text = text;
  }

  /** Index of `needle` at or after `from`, or -1. */
  find(needle: string, from: number): number {
    const known = this.#found.get(needle);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const pattern = new RegExp(needle.replace('/', '\\/'), 'ig');
    pattern.lastIndex = from;
    const index = pattern.exec(this.#text)?.index ?? -1;
    this.#found.set(needle, index);
    return index;
  }
}
