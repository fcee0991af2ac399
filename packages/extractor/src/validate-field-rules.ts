import { load } from 'cheerio/slim';
import type { FieldRule } from './extracted-page.js';
import { InvalidFieldRuleError } from './errors.js';

// Selectors compile on first use; an empty document makes that use cheap.
const empty = load('');

/**
 * Checks field rules once, at configuration time, instead of failing every
 * page: each selector must compile.
 *
 * @throws {InvalidFieldRuleError} for the first rule whose selector does not compile.
 */
export function validateFieldRules(rules: readonly FieldRule[]): void {
  for (const rule of rules) {
    try {
      empty(rule.selector);
    } catch (error) {
      throw new InvalidFieldRuleError(rule.name, rule.selector, { cause: error });
    }
  }
}
