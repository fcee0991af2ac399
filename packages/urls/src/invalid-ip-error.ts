/** Text given as an IP address is not one. Never retryable. */
export class InvalidIpError extends Error {
  override readonly name = 'InvalidIpError';
  /** The same text fails the same way every time. */
  readonly retryable = false;
  /** The text as given (cut to 100 characters). */
  readonly address: string;

  constructor(address: string) {
    const shown = address.slice(0, 100);
    super(`Not an IPv4 or IPv6 address: ${JSON.stringify(shown)}`);
    this.address = shown;
  }
}
