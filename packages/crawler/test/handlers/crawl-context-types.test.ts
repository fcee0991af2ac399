import { describe, expect, expectTypeOf, it } from 'vitest';
import { type CrawlContext, type CrawlRender, defineCrawler } from '../../src/index.js';

// Checked by `pnpm typecheck` (the @ts-expect-error lines fail it if they compile); run by vitest as any test.
describe('the route context\'s types', () => {
  it('rendered: undefined for a plain fetch, the render\'s facts once narrowed', () => {
    expectTypeOf<CrawlContext['rendered']>().toEqualTypeOf<CrawlRender | undefined>();
    expectTypeOf<CrawlRender['reason']>().toEqualTypeOf<'always' | 'auto' | 'sample'>();
    const crawler = defineCrawler({
      routes: {
        page: ({ rendered, push }) => {
          // @ts-expect-error a plain fetch has no render: the field must be narrowed first
          void rendered.html;
          if (rendered) expectTypeOf(rendered.html).toBeString();
          // @ts-expect-error the view is read-only
          if (rendered) rendered.complete = true;
          return push({ rendered: rendered !== undefined, missing: rendered?.missing.length ?? 0 });
        },
      },
      defaultRoute: 'page',
    });
    expect(Object.keys(crawler.routes)).toEqual(['page']);
  });
});
