export { createRobotsPolicy } from './robots-policy.js';
export type {
  FetchRobots,
  RobotsFetchResponse,
  RobotsPolicy,
  RobotsPolicyOptions,
  RobotsFailure,
  RobotsReason,
  RobotsVerdict,
} from './robots-policy.js';
export { parseRobotsTxt, isPathAllowed } from './parse-robots-txt.js';
export type { RobotsRules } from './parse-robots-txt.js';
export type { RobotsRule } from './robots-rule.js';
export { canonicalPath } from './match-path.js';
export { productTokenOf } from './product-token.js';
export { RobotsError, RobotsFetchPostponedError, RobotsOptionsError, RobotsStoreError } from './errors.js';
