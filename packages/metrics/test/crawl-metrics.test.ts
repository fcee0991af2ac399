import { describe, expect, it } from 'vitest';
import { CrawlMetrics } from '../src/index.js';

const page = (status: number) => ({ status, bytes: 100, retries: 1, timings: { waitMs: 5, fetchMs: 20 } });

describe('CrawlMetrics', () => {
  it('counts pages by status class and keeps every label set bounded', async () => {
    const metrics = new CrawlMetrics({ processMetrics: false });
    metrics.page(page(200));
    metrics.page(page(404));
    metrics.page(page(0));
    metrics.denied('rate');
    metrics.denied('http://evil.test/?x=1');
    metrics.deadLettered('http-503');
    metrics.deadLettered('Some Message With http://a.test/');
    metrics.retried(2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawlq_pages_total{status_class="2xx"} 1');
    expect(text).toContain('crawlq_pages_total{status_class="4xx"} 1');
    // Series that saw nothing yet are there at 0, so a rate() over them starts from the first scrape.
    expect(text).toContain('crawlq_pages_total{status_class="5xx"} 0');
    expect(text).toContain('crawlq_gate_denials_total{reason="concurrency"} 0');
    expect(text).toContain('crawlq_pages_total{status_class="none"} 1');
    expect(text).toContain('crawlq_gate_denials_total{reason="other"} 1');
    expect(text).toContain('crawlq_dead_letters_total{reason="http-503"} 1');
    expect(text).toContain('crawlq_dead_letters_total{reason="other"} 1');
    expect(text).toContain('crawlq_retries_total 5');
    expect(text).toContain('crawlq_response_bytes_total 300');
    expect(text).not.toMatch(/a\.test|evil/);
    expect(metrics.counters()).toEqual({ pages: 3, retries: 5, deadLetters: 2, statuses: { '2xx': 1, '4xx': 1, none: 1 } });
  });

  it('counts adaptive pace changes by direction and signal class, never by group', async () => {
    const metrics = new CrawlMetrics({ processMetrics: false });
    metrics.paceChanged({ direction: 'down', cause: '5xx' });
    metrics.paceChanged({ direction: 'down', cause: '5xx' });
    metrics.paceChanged({ direction: 'down', cause: 'latency' });
    metrics.paceChanged({ direction: 'down', cause: 'example.org' });
    metrics.paceChanged({ direction: 'up', cause: '5xx' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawlq_pace_changes_total{direction="down",reason="5xx"} 2');
    expect(text).toContain('crawlq_pace_changes_total{direction="down",reason="latency"} 1');
    expect(text).toContain('crawlq_pace_changes_total{direction="down",reason="other"} 1');
    expect(text).toContain('crawlq_pace_changes_total{direction="up",reason="recovered"} 1');
    // Zero series from the start, so a rate() sees the first change.
    expect(text).toContain('crawlq_pace_changes_total{direction="down",reason="timeout"} 0');
    expect(text).not.toMatch(/example\.org/);
  });
});
