import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, OPTION_TABLE, type OptionName } from '../src/index.js';

// `--request-timeout 0` passed validation, then every worker crashed on
// it and was respawned until none was left. A duration that makes no sense at
// 0 is refused when the config is read; no duration may be negative.
const POSITIVE: readonly OptionName[] = [
  'requestTimeout', 'renderTimeout', 'connectTimeout', 'responseTimeout', 'lookupTimeout', 'dnsTtlMin', 'dnsTtlMax', 'stallTimeout', 'freeSocketTimeout',
  'leaseTime', 'maxBlocked', 'maxPause', 'maxCrawlDelay', 'robotsTtl', 'dlqMaxAge', 'redisOutageLimit',
];

/** 0 has a documented meaning for these (no wait, no margin, never): each doc says so. */
const ZERO_ALLOWED: readonly OptionName[] = ['backoff', 'fetchBackoff', 'gracePeriod', 'safetyMargin', 'alertDelay', 'alertWindow', 'statsInterval'];

/** What another option must be for this one to take any value alone: a lease is at least the request timeout. */
function partners(name: OptionName): Record<string, string> {
  if (name === 'leaseTime') return { requestTimeout: '1ms' };
  if (name === 'requestTimeout') return { leaseTime: '1h' };
  return {};
}

function flagOf(name: OptionName): string {
  const flag = OPTION_TABLE[name].flag;
  if (flag === undefined) throw new Error(`${name} has no flag`);
  return flag;
}

function envOf(name: OptionName): string {
  const env = OPTION_TABLE[name].env;
  if (env === undefined) throw new Error(`${name} has no environment variable`);
  return env;
}

function refusal(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('durations', () => {
  it('every duration option is in one of the two lists', () => {
    // A duration option is one that reads `5m` as 300,000 ms.
    const durations = (Object.keys(OPTION_TABLE) as OptionName[]).filter((name) => {
      try {
        return loadConfig({ flags: { ...partners(name), [name]: '5m' } })[name] === 300_000;
      } catch {
        return false;
      }
    });
    // Their own floors, below.
    expect(durations).toContain('robotsRetryBudget');
    expect(durations).toContain('adaptiveRecovery');
    expect(durations.filter((name) => name !== 'robotsRetryBudget' && name !== 'adaptiveRecovery' && name !== 'revisit' && name !== 'revisitMin' && name !== 'revisitMax').sort()).toEqual([...POSITIVE, ...ZERO_ALLOWED].sort());
  });

  describe.each(POSITIVE)('%s', (name) => {
    it.each(['0', '0ms', '0s', 0])('refuses %j, naming the option, in one line', (value) => {
      const error = refusal(() => loadConfig({ flags: { [name]: value } }));
      expect(error.option).toBe(flagOf(name));
      expect(error.message).toMatch(new RegExp(`^${flagOf(name)}: expected a duration greater than 0`));
      expect(error.message).not.toContain('\n');
    });

    it.each(['-1', '-5s', -1000])('refuses the negative %j', (value) => {
      expect(refusal(() => loadConfig({ flags: { [name]: value } })).message).toMatch(/expected a duration greater than 0/);
    });

    it('refuses 0 from the environment too, naming the variable', () => {
      expect(refusal(() => loadConfig({ env: { [envOf(name)]: '0' } })).option).toBe(envOf(name));
    });

    it.each([['1ms', 1], ['250ms', 250], ['10s', 10_000], ['5m', 300_000], [1, 1]])('accepts %j', (value, ms) => {
      expect(loadConfig({ flags: { ...partners(name), [name]: value } })[name]).toBe(ms);
    });
  });

  describe.each(ZERO_ALLOWED)('%s', (name) => {
    it('accepts 0, which its doc explains', () => {
      expect(loadConfig({ flags: { [name]: '0' } })[name]).toBe(0);
      expect(OPTION_TABLE[name].doc).toMatch(/\(0: /);
    });

    it.each(['-1', '-5s', -1000])('refuses the negative %j', (value) => {
      const error = refusal(() => loadConfig({ flags: { [name]: value } }));
      expect(error.message).toMatch(new RegExp(`^${flagOf(name)}: expected a duration of 0 or more`));
    });
  });

  it('robotsRetryBudget and adaptiveRecovery keep their own floor', () => {
    expect(refusal(() => loadConfig({ flags: { robotsRetryBudget: '500ms' } })).message).toMatch(/expected at least 1s/);
    expect(loadConfig({ flags: { robotsRetryBudget: '2s' } }).robotsRetryBudget).toBe(2_000);
    expect(refusal(() => loadConfig({ flags: { adaptiveRecovery: '0' } })).message).toMatch(/^--adaptive-recovery: expected at least 1s/);
    expect(loadConfig({ flags: { adaptiveRecovery: '2m' } }).adaptiveRecovery).toBe(120_000);
  });

  it('adaptive pacing: a switch, a floor from 0.001 to 1, and rules may switch it per group', () => {
    expect(loadConfig({}).adaptive).toBe(false);
    expect(loadConfig({ env: { CRAWLQ_ADAPTIVE: 'yes', CRAWLQ_ADAPTIVE_FLOOR: '0.25' } })).toMatchObject({ adaptive: true, adaptiveFloor: 0.25 });
    expect(refusal(() => loadConfig({ flags: { adaptiveFloor: '0' } })).message).toMatch(/^--adaptive-floor: expected a number from 0\.001 to 1/);
    expect(refusal(() => loadConfig({ flags: { adaptiveFloor: '2' } })).message).toMatch(/^--adaptive-floor/);
  });
});
