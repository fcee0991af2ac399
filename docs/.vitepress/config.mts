// The manual as a static site: `pnpm docs:build` (checks every link between
// pages; a dead one fails the build), `pnpm docs:dev`, `pnpm docs:preview`.
//
// The source is the repository root, so the pages are the very files GitHub
// shows and their relative links work in both places: README.md (the home
// page), the chapters docs/NN-*.md, the generated API reference docs/api/, and
// the Markdown files they link to (CHANGELOG.md, examples/README.md, the
// package READMEs). Nothing is fetched from the network, at build or view time:
// no web fonts, no analytics, the built-in local search.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type DefaultTheme, type MarkdownRenderer } from 'vitepress';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The text of a Markdown file's first `# ` heading, else its path. */
function titleOf(path: string): string {
  const heading = /^# +(.+?)\s*$/m.exec(readFileSync(join(root, path), 'utf8'));
  return heading?.[1]?.replace(/`/g, '') ?? path;
}

/** A sidebar link to `path` (a Markdown file relative to the repository root). */
function item(path: string, text = titleOf(path)): DefaultTheme.SidebarItem {
  return { text, link: `/${path.replace(/\.md$/, '')}` };
}

/** The Markdown files directly in `dir`, sorted by name. */
function markdownIn(dir: string): string[] {
  return readdirSync(join(root, dir))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `${dir}/${name}`);
}

const apiKinds = [
  ['classes', 'Classes'],
  ['functions', 'Functions'],
  ['interfaces', 'Interfaces'],
  ['type-aliases', 'Type aliases'],
] as const;

const packageReadmes = readdirSync(join(root, 'packages'))
  .sort()
  .map((name) => `packages/${name}/README.md`)
  .filter((path) => existsSync(join(root, path)));

/**
 * GitHub's heading anchors (lower-cased, punctuation other than `-` and `_`
 * dropped, each space a `-`), so that a `#anchor` written for GitHub, and
 * checked by test/docs-links.test.ts, lands on the same heading in the site.
 */
function githubSlug(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
}

// The HTML elements the pages use on purpose; any other `<name>` in prose is a
// placeholder such as `<state-dir>` (GitHub drops it as an unknown tag, and Vue,
// which compiles each page, rejects it as an element never closed): shown as text.
const htmlElements = new Set(['a', 'b', 'br', 'code', 'details', 'em', 'i', 'img', 'kbd', 'p', 'span', 'strong', 'sub', 'summary', 'sup']);

/** A relative link to a repository file that is not a page (a `.ts` source, say). */
function isLinkToSourceFile(href: string): boolean {
  const path = href.split(/[?#]/, 1)[0] ?? '';
  return !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href) && /\.[a-z0-9]+$/i.test(path) && !/\.(md|html)$/i.test(path);
}

/**
 * Inline HTML that is not one of `htmlElements` (nor a comment) becomes text;
 * so does a link to a source file: the site serves pages only, and that link
 * (which test/docs-links.test.ts checks in the repository) would lead nowhere.
 */
function placeholdersAndSourceLinksAsText(md: MarkdownRenderer): void {
  md.core.ruler.after('inline', 'placeholders_and_source_links_as_text', (state) => {
    for (const block of state.tokens) {
      const children = block.children ?? [];
      for (const [at, token] of children.entries()) {
        if (token.type === 'html_inline') {
          const name = /^<\/?([A-Za-z][\w-]*)/.exec(token.content)?.[1];
          if (name !== undefined && !htmlElements.has(name.toLowerCase())) token.type = 'text';
        } else if (token.type === 'link_open' && isLinkToSourceFile(token.attrGet('href') ?? '')) {
          const close = children.findIndex((other, index) => index > at && other.type === 'link_close' && other.level === token.level);
          for (const link of [token, children[close]]) {
            if (link === undefined) continue;
            link.type = 'text';
            link.tag = '';
            link.content = '';
          }
        }
      }
    }
  });
}

export default defineConfig({
  title: 'crawlq',
  description: 'A distributed, polite web crawler on BullMQ and Redis',
  srcDir: '..',
  // Everything at the root but the book's folders, and within those only the
  // pages: no source, test or build output is read as a page.
  srcExclude: [
    ...readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !['docs', 'examples', 'packages'].includes(entry.name))
      .map((entry) => `${entry.name}/**`),
    'docs/.vitepress/**',
    'examples/*/**',
    'packages/*/*/**',
  ],
  rewrites: { 'README.md': 'index.md' },
  // Kept off on purpose: a link to a page that does not exist fails the build.
  ignoreDeadLinks: false,
  lastUpdated: false,
  markdown: { anchor: { slugify: githubSlug }, config: placeholdersAndSourceLinksAsText },
  themeConfig: {
    search: { provider: 'local' },
    outline: [2, 3],
    nav: [
      { text: 'Guide', link: '/docs/01-getting-started' },
      { text: 'API', link: '/docs/api/README' },
      { text: 'Changelog', link: '/CHANGELOG' },
    ],
    sidebar: [
      { text: 'Introduction', items: [{ text: 'crawlq', link: '/' }] }, // README.md, the home page
      { text: 'Guide', items: markdownIn('docs').map((path) => item(path)) },
      {
        text: 'API reference',
        items: [
          item('docs/api/README.md', 'Overview'),
          ...apiKinds
            .filter(([dir]) => existsSync(join(root, 'docs/api', dir)))
            .map(([dir, text]) => ({
              text,
              collapsed: true,
              items: markdownIn(`docs/api/${dir}`).map((path) => item(path, path.slice(path.lastIndexOf('/') + 1, -3))),
            })),
        ],
      },
      { text: 'Packages', collapsed: true, items: packageReadmes.map((path) => item(path)) },
      { text: 'More', items: [item('examples/README.md'), item('CHANGELOG.md')] },
    ],
  },
});
