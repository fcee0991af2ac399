import type { DomNode } from './dom-node.js';

/**
 * Deepest element nesting kept. Real pages stay well under 100 levels.
 * Blink's parser stops nesting at 512 for the same reason.
 */
export const MAX_DOM_DEPTH = 256;

/**
 * Flattens a tree in place so no node is deeper than `maxDepth`: everything
 * below a node at that depth becomes its direct children, in document order.
 *
 * Why: domutils' `find`, behind every cheerio selector, keeps its stack with
 * `unshift`/`shift`, so one query costs O(nodes x depth). 10k nested divs took
 * about 150 ms per selector and 20k about 500 ms: a hostile page could stall
 * a worker for minutes. Capping depth keeps every query linear.
 */
export function limitDepth(root: DomNode, maxDepth: number = MAX_DOM_DEPTH): void {
  const stack: { node: DomNode; depth: number }[] = [{ node: root, depth: 0 }];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { node, depth } = entry;
    const children = node.children;
    if (children === undefined || children.length === 0) continue;
    if (depth >= maxDepth) {
      if (children.some((child) => (child.children?.length ?? 0) > 0)) flattenInto(node);
      continue;
    }
    for (const child of children) stack.push({ node: child, depth: depth + 1 });
  }
}

/** Replaces `node`'s children by all its descendants, each left childless. */
function flattenInto(node: DomNode): void {
  const descendants: DomNode[] = [];
  const pending: DomNode[] = [...(node.children ?? [])].reverse();
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    descendants.push(current);
    const children = current.children;
    if (children !== undefined && children.length > 0) {
      for (let index = children.length - 1; index >= 0; index--) {
        const child = children[index];
        if (child !== undefined) pending.push(child);
      }
      current.children = [];
    }
  }
  for (const [index, descendant] of descendants.entries()) {
    descendant.parent = node;
    descendant.prev = descendants[index - 1] ?? null;
    descendant.next = descendants[index + 1] ?? null;
  }
  node.children = descendants;
}
