export {
  createAlerts,
  DIGEST_JOB_NAME,
  type Alerts,
  type CreateAlertsOptions,
  type FlushResult,
  type DigestJobData,
  type DigestJobResult,
} from './alerts.js';
export {
  DEFAULT_FIRST_DELAY_MS,
  DEFAULT_WINDOW_MS,
  DEFAULT_DELIVERY_POLICY,
  type AlertMailConfig,
  type AlertDeliveryPolicy,
} from './alert-config.js';
export { MAX_DIGEST_EXAMPLES, type Digest, type DigestExample } from './digest.js';
export { renderDigestEmail, MAX_DIGEST_ROWS, type DigestEmail, type DigestEmailOptions } from './digest-email.js';
export { AlertDeliveryError, AlertConfigError } from './errors.js';
