import { isElement } from './dom-node.js';
import type { DomElement, DomNode } from './dom-node.js';

/** One `<a href>` or `<area href>`. */
export interface RawLink {
  readonly href: string;
  readonly nofollow: boolean;
}

/** What a single pass over the document collects, before URL handling. */
export interface DocumentScan {
  baseHref: string | undefined;
  title: string | undefined;
  description: string | undefined;
  canonicalHref: string | undefined;
  lang: string | undefined;
  robotsNoindex: boolean;
  robotsNofollow: boolean;
  readonly links: RawLink[];
}

const WHITESPACE_RUN = /\s+/;
const ROBOTS_TOKEN_SEPARATOR = /[\s,]+/;

/**
 * Collects the built-in values in one walk, instead of one selector query
 * (one full traversal) each. Tag and attribute names are lower-case
 * (htmlparser2 in HTML mode lower-cases them).
 */
export function scanDocument(root: DomNode): DocumentScan {
  const scan: DocumentScan = {
    baseHref: undefined,
    title: undefined,
    description: undefined,
    canonicalHref: undefined,
    lang: undefined,
    robotsNoindex: false,
    robotsNofollow: false,
    links: [],
  };
  const stack: DomNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (isElement(node)) visit(node, scan);
    const children = node.children;
    if (children === undefined) continue;
    // Reverse push: children come off the stack in document order.
    for (let index = children.length - 1; index >= 0; index--) {
      const child = children[index];
      if (child !== undefined) stack.push(child);
    }
  }
  return scan;
}

function visit(element: DomElement, scan: DocumentScan): void {
  const { attribs } = element;
  switch (element.name) {
    case 'a':
    case 'area':
      if (attribs.href !== undefined) scan.links.push({ href: attribs.href, nofollow: hasToken(attribs.rel, 'nofollow') });
      break;
    case 'base':
      // The first <base> with an href is the one browsers use.
      if (scan.baseHref === undefined && attribs.href !== undefined) scan.baseHref = attribs.href;
      break;
    case 'title':
      // An SVG <title> is a tooltip, not the document title.
      if (scan.title === undefined && !hasAncestor(element, 'svg')) scan.title = textOf(element);
      break;
    case 'html':
      if (scan.lang === undefined && attribs.lang !== undefined) scan.lang = attribs.lang;
      break;
    case 'link':
      if (scan.canonicalHref === undefined && attribs.href !== undefined && hasToken(attribs.rel, 'canonical')) {
        scan.canonicalHref = attribs.href;
      }
      break;
    case 'meta':
      visitMeta(attribs, scan);
      break;
    default:
      break;
  }
}

function visitMeta(attribs: Record<string, string | undefined>, scan: DocumentScan): void {
  const name = attribs.name?.trim().toLowerCase();
  if (name === 'description') {
    scan.description ??= attribs.content;
  } else if (name === 'robots') {
    for (const token of (attribs.content ?? '').toLowerCase().split(ROBOTS_TOKEN_SEPARATOR)) {
      if (token === 'noindex' || token === 'none') scan.robotsNoindex = true;
      if (token === 'nofollow' || token === 'none') scan.robotsNofollow = true;
    }
  }
}

function hasToken(list: string | undefined, token: string): boolean {
  return list !== undefined && list.toLowerCase().split(WHITESPACE_RUN).includes(token);
}

function hasAncestor(node: DomNode, name: string): boolean {
  for (let current = node.parent; current !== null; current = current.parent) {
    if (current.name === name) return true;
  }
  return false;
}

/**
 * Text content of a node, like cheerio's `.text()` but iterative, so deep
 * trees cannot overflow the stack.
 */
export function textOf(root: DomNode): string {
  const parts: string[] = [];
  const stack: DomNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'text') {
      parts.push(node.data ?? '');
    } else if (node.type !== 'comment' && node.children !== undefined) {
      for (let index = node.children.length - 1; index >= 0; index--) {
        const child = node.children[index];
        if (child !== undefined) stack.push(child);
      }
    }
  }
  return parts.join('');
}
