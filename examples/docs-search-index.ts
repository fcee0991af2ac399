// A documentation site into a search index: one line per section (h2) of
// every page, with the page's title and the section's anchor, ready for a
// client-side search library (run with --out search-index.jsonl).
import { defineCrawler } from '@crawlq/crawler/api';

export interface IndexEntry {
  url: string;
  title: string;
  section: string;
  text: string;
}

export default defineCrawler<IndexEntry>()({
  name: 'docs-search-index',
  routes: {
    doc: async ({ $, request, enqueue, push }) => {
      // Only the docs: navigation links within the site.
      await enqueue($('nav a').map((_, a) => $(a).attr('href')), { sameGroupOnly: true });
      const title = $('title').text().trim();
      for (const heading of $('main h2').toArray()) {
        const section = $(heading);
        const text = section.nextUntil('h2').text().replace(/\s+/g, ' ').trim();
        await push({ url: `${request.loadedUrl}#${section.attr('id') ?? ''}`, title, section: section.text().trim(), text });
      }
    },
  },
  defaultRoute: 'doc',
});
