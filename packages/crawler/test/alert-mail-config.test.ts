import { loadConfig } from '@crawlq/config';
import { describe, expect, it } from 'vitest';
import { alertMailConfig } from '../src/index.js';

// The digest e-mail tells the operator what to run; outside the default
// namespace that command must name the crawl it is about (issue 12).
describe('the alert e-mail review command', () => {
  it('names --namespace when the crawl is not in the default one', () => {
    expect(alertMailConfig(loadConfig({})).reviewCommand).toBe('pnpm crawlq dlq list');
    expect(alertMailConfig(loadConfig({ flags: { namespace: 'shop' } })).reviewCommand).toBe('pnpm crawlq dlq list --namespace shop');
  });
});
