// A news archive read from the site's sitemaps (--sitemaps enqueues what
// robots.txt's Sitemap: lines list) and archived as WARC (--warc): one item
// per article, pages that are not articles archived only.
import { defineCrawler } from '@crawlq/crawler/api';

export interface Article {
  url: string;
  headline: string;
  published: string | null;
  words: number;
}

export default defineCrawler<Article>()({
  name: 'news-archive',
  routes: {
    page: async ({ $, request, push, log }) => {
      const headline = $('article h1').first().text().trim();
      if (headline === '') {
        log.debug('not an article');
        return;
      }
      const text = $('article p').text();
      await push({ url: request.url, headline, published: $('article time').attr('datetime') ?? null, words: text.split(/\s+/).filter(Boolean).length });
    },
  },
  defaultRoute: 'page',
  beforeRequest: ({ headers }) => {
    headers['accept-language'] = 'en';
  },
});
