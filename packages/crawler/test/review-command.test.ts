import { describe, expect, it } from 'vitest';
import { dlqReviewCommand } from '../src/index.js';

describe('dlqReviewCommand', () => {
  it('names the namespace only when it is not the default one', () => {
    expect(dlqReviewCommand('crawlq', 'crawlq')).toBe('crawlq dlq list');
    expect(dlqReviewCommand('pnpm crawlq', 'crawlq')).toBe('pnpm crawlq dlq list');
    expect(dlqReviewCommand('crawlq', 'shop-eu')).toBe('crawlq dlq list --namespace shop-eu');
  });
});
