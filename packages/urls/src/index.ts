export { InvalidIpError, InvalidPatternError, InvalidUrlError } from './errors.js';
export type { InvalidUrlReason } from './errors.js';
export { normalizeUrl, tryNormalizeUrl, DEFAULT_MAX_URL_LENGTH } from './normalize-url.js';
export type { NormalizeOptions, NormalizeResult } from './normalize-url.js';
export { urlFingerprint } from './url-fingerprint.js';
export { groupKeyOf, politenessGroupOf, domainOf, GROUP_NAME_PATTERN } from './group-key.js';
export type { GroupBy, GroupRule, Grouping } from './group-key.js';
export { createScopeFilter } from './scope-filter.js';
export type { ScopeMode, ScopeOptions } from './scope-filter.js';
export { parsePattern } from './parse-pattern.js';
export { hostMatchesGlob, isHostGlob } from './host-glob.js';
export { classifyIp, isPublicIp } from './classify-ip.js';
export { cidrContains, formatIp, ipBits, parseCidr, serverOfAddress, type Cidr, type IpBits } from './ip-prefix.js';
export type { IpClass } from './classify-ip.js';
export { redactConnectionUrl, redactOutput, redactText, redactUrl, withoutUserinfo } from './redact-url.js';
export { redactWrites } from './redact-stream.js';
export { escapeHtml } from './escape-html.js';
export {
  FAILURE_REASONS,
  failureReasonInMessage,
  failureReasonOfCode,
  httpFailureReason,
  isFailureReason,
  messageWithReason,
  statusOfFailureReason,
  type FailureReason,
  type NamedFailureReason,
} from '@crawlq/errors';
