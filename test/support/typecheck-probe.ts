import { defineCrawler } from '@crawlq/crawler';

interface Product { url: string; price: number }

export const one = defineCrawler({
  routes: {
    list: async ({ $, enqueue }) => {
      await enqueue($('a.product').map((_, a) => $(a).attr('href')), { label: 'product' });
      // @ts-expect-error an unknown label
      await enqueue('x', { label: 'nope' });
    },
    product: async ({ request, push }) => {
      await push({ url: request.url });
    },
  },
  defaultRoute: 'list',
});

export const two = defineCrawler<Product>()({
  routes: {
    list: async ({ enqueue }) => {
      // @ts-expect-error an unknown label
      await enqueue('x', { label: 'nope' });
    },
    product: async ({ request, push }) => {
      await push({ url: request.url, price: 1 });
      // @ts-expect-error a wrong field type
      await push({ url: request.url, price: 'x' });
      // @ts-expect-error a field Product does not have
      await push({ url: request.url, price: 1, colour: 'red' });
      // @ts-expect-error a missing field
      await push({ url: request.url });
    },
  },
  // @ts-expect-error not a route
  defaultRoute: 'nope',
});
