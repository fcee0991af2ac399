// A paginated catalogue: list pages link to products and to the next list
// page; each product becomes one typed row (run with --database-url).
import { defineCrawler, NonRetryableError } from '@crawlq/crawler/api';

export interface Product {
  url: string;
  name: string;
  price: number;
  /** The list page the product was found on (userData travels with the URL). */
  listPage: number;
}

export default defineCrawler<Product>()({
  name: 'catalogue-to-postgres',
  routes: {
    list: async ({ $, request, enqueue }) => {
      const listPage = Number(/(\d+)$/.exec(request.url)?.[1] ?? '1');
      await enqueue($('a.product').map((_, a) => $(a).attr('href')), { label: 'product', userData: { listPage }, sameGroupOnly: true });
      await enqueue($('a.next').attr('href'), { label: 'list' });
    },
    product: async ({ $, request, push }) => {
      const price = Number.parseFloat($('.price').first().text());
      if (Number.isNaN(price)) throw new NonRetryableError(`no price on ${request.url}`, { reason: 'no-price' });
      const listPage = request.userData.listPage;
      await push({ url: request.url, name: $('h1').first().text().trim(), price, listPage: typeof listPage === 'number' ? listPage : 0 });
    },
  },
  defaultRoute: 'list',
});
