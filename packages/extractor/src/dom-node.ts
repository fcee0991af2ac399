/**
 * The parts of domhandler's node shape this package reads and writes.
 * Declared structurally because domhandler is cheerio's dependency, not ours.
 */
export interface DomNode {
  type: string;
  data?: string;
  name?: string;
  attribs?: Record<string, string | undefined>;
  children?: DomNode[];
  parent: DomNode | null;
  prev: DomNode | null;
  next: DomNode | null;
}

/** A node with a tag name and attributes. */
export interface DomElement extends DomNode {
  name: string;
  attribs: Record<string, string | undefined>;
  children: DomNode[];
}

/** Whether a node is an element (`script` and `style` are element types of their own). */
export function isElement(node: DomNode): node is DomElement {
  return (node.type === 'tag' || node.type === 'script' || node.type === 'style') && node.attribs !== undefined;
}
