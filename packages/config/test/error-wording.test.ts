import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, OPTION_TABLE, type OptionName } from '../src/index.js';

/** zod's own wording, which means nothing to someone typing a flag. */
const VALIDATOR_TEXT = /Invalid input|Invalid option|Invalid URL|Invalid string|Too small|Too big|received |expected (string|number|object|array|boolean)\b|>=|<=/;

function errorFor(name: OptionName, value: unknown): string | undefined {
  try {
    loadConfig({ flags: { [name]: value } });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

describe('option errors are worded by the option', () => {
  it('a bad rate says how a rate is written', () => {
    expect(errorFor('rate', '5')).toBe('--rate: expected MAX/DURATION such as 5/1s, or none (got "5")');
    expect(errorFor('rate', '0/1s')).toMatch(/^--rate: expected MAX\/DURATION such as 5\/1s/);
  });

  it('a number out of range names the range', () => {
    expect(errorFor('concurrency', '0')).toBe('--concurrency: expected a whole number from 1 to 10000 (got "0")');
    expect(errorFor('maxDepth', '-1')).toBe('--max-depth: expected a whole number from 0 to 10000 (got "-1")');
    expect(errorFor('maxPages', '1.5')).toBe('--max-pages: expected a whole number of 1 or more (got "1.5")');
  });

  it('a word not among the choices lists them', () => {
    expect(errorFor('scope', 'foo')).toBe('--scope: expected host, domain or any (got "foo")');
    expect(errorFor('seenSet', 'x')).toBe('--seen-set: expected exact or bloom (got "x")');
  });

  it('no option ever answers with the validator\'s internal text', () => {
    const bad: unknown[] = ['', 'abc', '-1', '0', '5', '1.5', '99999999999999999999', 'x'.repeat(600), 7, -3, true, {}, [1], null];
    for (const name of Object.keys(OPTION_TABLE) as OptionName[]) {
      if (OPTION_TABLE[name].flag === undefined) continue; // config-file-only objects: the path is the message
      for (const value of bad) {
        const message = errorFor(name, value);
        if (message !== undefined) expect(message, `${name} = ${JSON.stringify(value)}`).not.toMatch(VALIDATOR_TEXT);
      }
    }
  });
});
