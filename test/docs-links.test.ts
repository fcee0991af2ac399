import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';

// Every relative link and #anchor in README.md and docs/*.md resolves: the
// manual is split in chapters that link to each other, and a section moved
// or renamed must not leave a dead link behind. Read from the files only, no
// network: links to http(s) and mailto addresses are not followed.

/** The Markdown files checked: README.md and the chapters (not the generated docs/api). */
function manualFiles(): string[] {
  const docs = join(REPO_ROOT, 'docs');
  const chapters = readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => join(docs, name));
  return [join(REPO_ROOT, 'README.md'), ...chapters];
}

/**
 * The text outside fenced code blocks and inline code spans (a link inside
 * code is an example, not a link); lines are kept, so line numbers still hold.
 */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, '')).replace(/`[^`\n]*`/g, '');
}

/**
 * The anchors GitHub gives a file's headings: lower-cased, punctuation other
 * than `-` and `_` dropped, spaces turned to `-`, a repeated one suffixed
 * `-1`, `-2`; plus explicit `<a id="...">` / `<a name="...">`.
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] ?? '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading counts by its text
      .replace(/<[^>]+>/g, '');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  for (const match of withoutFences.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  return anchors;
}

/** `[text](target)` and `[label]: target` links of a file's prose, with their line numbers. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  const text = prose(markdown);
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)/gm)) {
    const target = match[1] ?? match[2] ?? '';
    links.push({ target, line: text.slice(0, match.index).split('\n').length });
  }
  return links;
}

/** What is wrong with each relative link of `file` (empty when every one resolves). */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const markdown = readFileSync(file, 'utf8');
  for (const { target, line } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:: not followed, no network
    const [path = '', anchor] = target.split('#', 2);
    const where = `${relative(REPO_ROOT, file)} (near line ${line}): ${target}`;
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    if (!existsSync(resolved)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(`${where}: an anchor into something that is not a Markdown file`);
      continue;
    }
    if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) broken.push(`${where}: no heading with that anchor`);
  }
  return broken;
}

describe('the manual (README.md and docs/*.md)', () => {
  it('gives headings the anchors GitHub gives them', () => {
    const anchors = anchorsOf('# crawlq\n## Pages that need a browser (`--render`)\n## Every option\n## Every option\n```sh\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['crawlq', 'pages-that-need-a-browser---render', 'every-option', 'every-option-1']);
  });

  it('finds a dead link or anchor when there is one', () => {
    const links = linksOf('See [a](missing.md), [b](#nowhere), `[c](in-code.md)` and [d](https://example.com/).\n');
    expect(links.map((link) => link.target)).toEqual(['missing.md', '#nowhere', 'https://example.com/']);
  });

  it('has chapters, and a README that links to each of them', () => {
    const files = manualFiles();
    expect(files.length).toBeGreaterThan(5);
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const linked = new Set(linksOf(readme).map((link) => link.target.split('#')[0]));
    for (const chapter of files.slice(1)) expect(linked, relative(REPO_ROOT, chapter)).toContain(relative(REPO_ROOT, chapter));
  });

  it('has no relative link or #anchor that does not resolve', () => {
    expect(manualFiles().flatMap(brokenLinks)).toEqual([]);
  });
});
