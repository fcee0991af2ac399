import { describe, expect, it } from 'vitest';
import {
  adoptDefinition,
  ConfigError,
  conflictMessage,
  crawlqCommand,
  definitionConflicts,
  definitionValuesFrom,
  FLEET_OPTIONS,
  loadConfig,
  mergeDefinition,
  OPTION_TABLE,
  parseDefinitionValues,
  canonicalJson,
  type OptionName,
} from '../src/index.js';

describe('option scopes', () => {
  it('every option says whether it is fleet-wide or per process', () => {
    for (const entry of Object.values(OPTION_TABLE)) expect(['fleet', 'process']).toContain(entry.scope);
  });

  it('what shapes fetching and politeness is fleet-wide; connections, output and ports are per process', () => {
    const fleet: OptionName[] = ['maxDepth', 'scope', 'include', 'exclude', 'maxPages', 'maxPagesPerGroup', 'groupBy', 'groupRules', 'limitRules', 'rate', 'burst', 'domainConcurrency', 'safetyMargin', 'leaseTime', 'maxPause', 'maxCrawlDelay', 'sortQuery', 'fields', 'userAgent', 'ignoreRobots', 'globalRate', 'attempts', 'backoff', 'seenSet', 'requestTimeout', 'maxBodySize', 'maxRedirects', 'allowPrivateNetwork'];
    const local: OptionName[] = ['redisUrl', 'namespace', 'stateDir', 'concurrency', 'out', 'gracePeriod', 'workers', 'smtpUrl', 'dashboardPort', 'dashboardHost', 'maxSockets', 'sitemaps'];
    for (const name of fleet) expect(FLEET_OPTIONS, name).toContain(name);
    for (const name of local) expect(FLEET_OPTIONS, name).not.toContain(name);
  });
});

describe('crawl definition', () => {
  it('holds every fleet option of a config and nothing per process', () => {
    const values = definitionValuesFrom(loadConfig({ flags: { maxDepth: '1', rate: '5/1s', concurrency: '3' } }));
    expect(values.maxDepth).toBe(1);
    expect(values.rate).toEqual({ max: 5, durationMs: 1_000 });
    expect(values.scope).toBe('host'); // defaults are part of it too
    expect('concurrency' in values).toBe(false);
    expect('maxPages' in values).toBe(false); // unset stays unset
  });

  it('round-trips through JSON and validates what it reads', () => {
    const values = definitionValuesFrom(loadConfig({ flags: { include: '/a/*', rate: 'none', backoff: '2s', maxPages: '9' } }));
    const parsed = parseDefinitionValues(JSON.parse(canonicalJson(values)));
    expect(canonicalJson(parsed)).toBe(canonicalJson(values));
    expect(parsed.rate).toBeNull();
    expect(parsed.include).toEqual(['/a/*']);
    // A definition written before an option existed takes that option's default.
    expect(parseDefinitionValues({ maxDepth: 2 }).userAgent).toBe(OPTION_TABLE.userAgent.default);
    expect(() => parseDefinitionValues({ maxDepth: -1 })).toThrow(ConfigError);
    expect(() => parseDefinitionValues([])).toThrow(/not a JSON object/);
  });

  it('a process given the fleet value, or no value, does not conflict', () => {
    const fleet = definitionValuesFrom(loadConfig({ flags: { maxDepth: '1', rate: '5/1s' } }));
    expect(definitionConflicts(loadConfig({ flags: { concurrency: '4' } }), fleet)).toEqual([]);
    // Spelled differently, equal after parsing.
    expect(definitionConflicts(loadConfig({ flags: { rate: '5/1000ms', maxDepth: 1 } }), fleet)).toEqual([]);
  });

  it('a process given another value of a fleet option conflicts, from a flag, the environment or a file', () => {
    const fleet = definitionValuesFrom(loadConfig({ flags: { maxDepth: '1', rate: '5/1s' } }));
    const conflicts = definitionConflicts(loadConfig({ flags: { rate: '2/1s' }, env: { CRAWLQ_MAX_DEPTH: '3' } }), fleet);
    expect(conflicts.map((conflict) => conflict.option).sort()).toEqual(['maxDepth', 'rate']);
    const rate = conflicts.find((conflict) => conflict.option === 'rate')!;
    const message = conflictMessage(rate, 4);
    expect(message).not.toContain('\n');
    expect(message).toContain('--rate');
    expect(message).toContain('given 2/1s');
    expect(message).toContain('(version 4) has 5/1s');
    expect(message).toContain('`crawlq config set --rate 2/1s`');
    // Outside the default namespace the fix names the crawl it is about.
    expect(conflictMessage(rate, 4, { namespace: 'shop' })).toContain('`crawlq config set --rate 2/1s --namespace shop`');
    // The command the operator ran this process with, not always `crawlq`.
    expect(conflictMessage(rate, 4, { namespace: 'shop', cli: 'pnpm crawlq' })).toContain('`pnpm crawlq config set --rate 2/1s --namespace shop`');
    expect(conflictMessage(rate, 4, { cli: 'pnpm crawlq' })).toContain('`pnpm crawlq config set --rate 2/1s`');
    expect(crawlqCommand('dlq list', 'crawlq', 'pnpm crawlq')).toBe('pnpm crawlq dlq list');
    expect(crawlqCommand('dlq list', 'shop-eu')).toBe('crawlq dlq list --namespace shop-eu');
  });

  it('config-file-only options are named by key and changed with config set --config', () => {
    const fleet = definitionValuesFrom(loadConfig({}));
    const [conflict] = definitionConflicts(
      loadConfig({ flags: { limitRules: [{ match: 'a.example', rate: '1/1s' }] } }),
      fleet,
    );
    expect(conflict?.option).toBe('limitRules');
    expect(conflictMessage(conflict!, 1)).toMatch(/^limitRules: .*crawlq config set --config FILE/);
  });

  it('merge: no base means the whole fleet configuration; a base keeps what was not given', () => {
    const first = mergeDefinition(null, loadConfig({ flags: { maxDepth: '1' } }));
    expect(first.values.maxDepth).toBe(1);
    expect(first.changed).toEqual([]);
    const next = mergeDefinition(first.values, loadConfig({ flags: { rate: '3/1s', maxDepth: '1' } }));
    expect(next.changed).toEqual(['rate']);
    expect(next.values.maxDepth).toBe(1);
    expect(next.values.rate).toEqual({ max: 3, durationMs: 1_000 });
    // Defaults of the second process do not reset the first one's choices.
    expect(mergeDefinition(first.values, loadConfig({})).changed).toEqual([]);
  });

  it('merge refuses to change the seen-set layout of a crawl that has one', () => {
    const base = mergeDefinition(null, loadConfig({})).values;
    expect(() => mergeDefinition(base, loadConfig({ flags: { seenSet: 'bloom' } }))).toThrow(/--seen-set: cannot change/);
  });

  it('adopt: fleet options from the definition, process options kept, frozen', () => {
    const fleet = definitionValuesFrom(loadConfig({ flags: { maxDepth: '1', userAgent: 'fleet-bot' } }));
    const own = loadConfig({ flags: { concurrency: '7', out: 'x.jsonl' } });
    const adopted = adoptDefinition(own, fleet);
    expect(adopted.maxDepth).toBe(1);
    expect(adopted.userAgent).toBe('fleet-bot');
    expect(adopted.concurrency).toBe(7);
    expect(adopted.out).toBe('x.jsonl');
    expect(adopted.maxPages).toBeUndefined();
    expect(Object.isFrozen(adopted)).toBe(true);
  });
});

describe('--shards', () => {
  it('keeps --global-rate (each shard paces a whole share) when it has a start per shard, and --max-pages', () => {
    expect(loadConfig({ flags: { shards: '3', globalRate: '10/1s' } })).toMatchObject({ shards: 3, globalRate: { max: 10, durationMs: 1_000 } });
    expect(() => loadConfig({ flags: { shards: '3', globalRate: '2/1s' } })).toThrow('--global-rate: 2/1s is fewer starts than --shards 3');
    expect(loadConfig({ flags: { shards: '3', maxPagesPerGroup: '100', globalRate: 'none' } }).shards).toBe(3);
    expect(loadConfig({ flags: { shards: '3', maxPages: '100' } })).toMatchObject({ shards: 3, maxPages: 100 });
    expect(loadConfig({ flags: { shards: '1', maxPages: '100' } }).maxPages).toBe(100);
  });

  it('cannot change, nor can the grouping that picks a URL\'s shard; a crawl-wide rate can join a sharded definition', () => {
    const base = mergeDefinition(null, loadConfig({ flags: { shards: '4' } })).values;
    expect(() => mergeDefinition(base, loadConfig({ flags: { shards: '2' } }))).toThrow(/--shards: cannot change/);
    expect(() => mergeDefinition(base, loadConfig({ flags: { groupBy: 'domain' } }))).toThrow(/--group-by: cannot change in a crawl of 4 shards/);
    expect(mergeDefinition(base, loadConfig({ flags: { globalRate: '10/1s' } })).changed).toEqual(['globalRate']);
    expect(() => mergeDefinition(base, loadConfig({ flags: { globalRate: '3/1s' } }))).toThrow('--global-rate: 3/1s is fewer starts than --shards 4');
    expect(mergeDefinition(base, loadConfig({ flags: { maxPages: '10' } })).changed).toEqual(['maxPages']);
    // One shard: grouping may still change.
    const single = mergeDefinition(null, loadConfig({})).values;
    expect(mergeDefinition(single, loadConfig({ flags: { groupBy: 'domain' } })).changed).toEqual(['groupBy']);
  });
});

describe('--lease-time against --request-timeout', () => {
  it('refuses a lease shorter than a request, whoever gives which', () => {
    expect(() => loadConfig({ flags: { leaseTime: '1s' } })).toThrow('--lease-time: 1s is shorter than --request-timeout 30s');
    expect(() => loadConfig({ env: { CRAWLQ_REQUEST_TIMEOUT: '2m' } })).toThrow('--lease-time: 1m is shorter than --request-timeout 2m');
    expect(loadConfig({ flags: { leaseTime: '30s' } }).leaseTime).toBe(30_000);
    expect(loadConfig({ flags: { leaseTime: '1s', requestTimeout: '1s' } }).leaseTime).toBe(1_000);
  });

  it('refuses a change to the fleet that would leave its lease shorter than its requests', () => {
    const base = mergeDefinition(null, loadConfig({ flags: { leaseTime: '10s', requestTimeout: '10s' } })).values;
    expect(() => mergeDefinition(base, loadConfig({ flags: { requestTimeout: '20s' } }))).toThrow('--lease-time: 10s is shorter than --request-timeout 20s');
    expect(mergeDefinition(base, loadConfig({ flags: { requestTimeout: '5s' } })).changed).toEqual(['requestTimeout']);
  });
});
