/**
 * The dashboard options cannot be used safely or at all (a public address
 * without auth, an empty password, a bad port or job policy). Not retryable:
 * fix the options.
 */
export class DashboardConfigError extends Error {
  override readonly name = 'DashboardConfigError';
  readonly retryable = false;
  /** The option at fault (`host`, `auth`, `port`, `jobPolicy`, ...). */
  readonly option: string;

  constructor(option: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.option = option;
  }
}

/**
 * The dashboard could not start: Redis did not answer, or the port could not
 * be bound. Retryable by the operator once the cause is fixed.
 */
export class DashboardStartError extends Error {
  override readonly name = 'DashboardStartError';
  readonly retryable = true;
}
