import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderVerdicts } from '../../src/render/render-verdicts.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis?.stop());

describe('RenderVerdicts (--render auto, fleet-wide)', () => {
  it('samples an undecided group, judges it static after three plain-enough samples in a row, and render after one that found more', async () => {
    const a = new RenderVerdicts(redis.client(), 'verdicts-1', { cacheMs: 0 });
    const b = new RenderVerdicts(redis.client(), 'verdicts-1', { cacheMs: 0 });
    expect(await a.decide('static.test')).toBe('sample');
    expect(await a.report('static.test', false)).toBeUndefined();
    expect(await b.report('static.test', false)).toBeUndefined();
    expect((await a.report('static.test', false))?.verdict).toBe('static');
    // Another worker of the fleet follows the verdict: plain fetches from now on.
    expect(await b.decide('static.test')).toBe('plain');

    expect((await b.report('app.test', true))?.verdict).toBe('render');
    expect(await a.decide('app.test')).toBe('render');
    // A rendered group that stops needing it turns static after as many pages in a row; a need in between starts the count again.
    await a.report('app.test', false);
    await a.report('app.test', false);
    await a.report('app.test', true);
    await a.report('app.test', false);
    expect(await a.decide('app.test')).toBe('render');
  });

  it('a static group is re-checked once per period: one worker of the fleet gets the sample', async () => {
    const options = { cacheMs: 0, recheckMs: 200, samples: 1 };
    const a = new RenderVerdicts(redis.client(), 'verdicts-2', options);
    const b = new RenderVerdicts(redis.client(), 'verdicts-2', options);
    await a.report('site.test', false);
    expect(await a.decide('site.test')).toBe('plain');
    await new Promise((resolve) => setTimeout(resolve, 250));
    const decisions = [await a.decide('site.test'), await b.decide('site.test')];
    expect(decisions.sort()).toEqual(['plain', 'sample']);
  });
});
