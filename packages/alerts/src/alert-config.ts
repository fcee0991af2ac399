/** Where and how alert e-mails go. Passed in; nothing is read from the environment. */
export interface AlertMailConfig {
  /**
   * `smtp://host:port` or `smtps://host:port` (implicit TLS), optionally with
   * `user:password@`. Without it, alerts are written as `.eml` files to `outboxDir`.
   */
  readonly smtpUrl?: string | undefined;
  /** SMTP user; used when the URL carries none. */
  readonly smtpUser?: string | undefined;
  /** SMTP password; used when the URL carries none. */
  readonly smtpPassword?: string | undefined;
  readonly from: string;
  readonly to: readonly string[];
  /** Directory for `.eml` files when there is no `smtpUrl` (created when missing). */
  readonly outboxDir: string;
  /** Delay of the first digest after a quiet period. @default 30000 */
  readonly firstDelayMs?: number | undefined;
  /** At most one digest per window. @default 900000 (15 min) */
  readonly windowMs?: number | undefined;
  /** Linked from every e-mail when set. */
  readonly dashboardUrl?: string | undefined;
  /** Shown in every e-mail, e.g. `pnpm crawlq dlq list`. */
  readonly reviewCommand: string;
}

/** How alert jobs are retried while SMTP is down or refusing. */
export interface AlertDeliveryPolicy {
  /** @default 50 */
  readonly attempts?: number;
  /** First retry delay; doubles per attempt. @default 5000 */
  readonly backoffMs?: number;
  /** Cap on the retry delay. @default 600000 (10 min) */
  readonly maxBackoffMs?: number;
}

export const DEFAULT_FIRST_DELAY_MS = 30_000;
export const DEFAULT_WINDOW_MS = 900_000;
export const DEFAULT_DELIVERY_POLICY: Required<AlertDeliveryPolicy> = { attempts: 50, backoffMs: 5_000, maxBackoffMs: 600_000 };
