import { UnrecoverableError, type Job } from 'bullmq';

/**
 * True when BullMQ will not retry the job after this failure: its attempts
 * are used up, or the error is an `UnrecoverableError` (subclasses included,
 * as BullMQ itself checks with instanceof).
 */
export function isFinalFailure(job: Pick<Job, 'attemptsMade' | 'opts'>, error: unknown): boolean {
  const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
  return error instanceof UnrecoverableError || name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
}
