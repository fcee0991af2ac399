export { extractPage } from './extract-page.js';
export type { ExtractInput } from './extract-page.js';
export type { ExtractedPage, FieldRule } from './extracted-page.js';
export { isHtml } from './is-html.js';
export { decodeBody } from './decode-body.js';
export type { DecodedBody } from './decode-body.js';
export { InvalidFieldRuleError } from './invalid-field-rule-error.js';
export { validateFieldRules } from './validate-field-rules.js';
export { RECORD_CAPS, capCodePoints } from './record-caps.js';
