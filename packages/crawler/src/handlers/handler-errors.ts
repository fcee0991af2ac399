import { PermanentHandlerError, RetryableHandlerError, type HandlerFailureFields } from '../errors.js';

export { RetryableError, NonRetryableError, retryableByUser, type HandlerErrorOptions } from './user-errors.js';

/** How a failure of the user's code fails its job. */
export interface HandlerFailureOptions {
  readonly retryable: boolean;
  /** The dead letter's reason; else the thrown error's own `reason`, else `handler`. */
  readonly reason?: string | undefined;
  /** Replaces the thrown error's message (an `onFailure` decision's). */
  readonly message?: string | undefined;
}

/**
 * What the user's code threw, as its job fails with it: the message and the
 * user's stack are kept (redacted in the dead letter); the reason is the
 * user's own (kebab-case) or `handler`. A retryable one uses an attempt; the
 * other is BullMQ's UnrecoverableError, dead-lettered at once.
 */
export function handlerFailure(thrown: unknown, options: HandlerFailureOptions): Error & HandlerFailureFields {
  const error = thrown instanceof Error ? thrown : new Error(typeof thrown === 'string' ? thrown : `a ${typeof thrown} was thrown`);
  const reason = kebab(options.reason ?? (error as { reason?: unknown }).reason);
  const message = `${reason ?? 'handler'}: ${options.message ?? error.message}`;
  const fields = { cause: thrown, reason, stack: error.stack };
  return options.retryable ? new RetryableHandlerError(message, fields) : new PermanentHandlerError(message, fields);
}

function kebab(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const words = value.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return words === '' ? undefined : words;
}
