import type { CrawlJobData } from '@crawlq/queue';
import { withoutUserinfo } from '@crawlq/urls';
import { UnrecoverableError, type Job } from 'bullmq';
import type { Crawler, CrawlLog } from './crawler-types.js';
import { handlerFailure } from './handler-errors.js';
import type { PageHandler, PageHandlerOptions } from './page-handler.js';

/**
 * Asks the crawler's `onFailure` what to do with a failed attempt: retry it
 * (a retryable error, even for a failure crawlq would not retry, while
 * attempts are left), dead-letter it now with the user's reason, or leave
 * crawlq's decision. Deferrals (BullMQ's DelayedError) are not failures and
 * are never shown to it. Returns the error the job fails with.
 */
export async function decideFailure(
  job: Pick<Job<CrawlJobData>, 'data' | 'attemptsMade' | 'opts'>,
  error: unknown,
  parts: { crawler: Crawler; handler: PageHandler; log: PageHandlerOptions['log'] },
): Promise<unknown> {
  const { onFailure } = parts.crawler;
  if (onFailure === undefined || !(error instanceof Error) || error.name === 'DelayedError') return error;
  const meta = await parts.handler.meta(job.data.url);
  const label = meta?.label ?? parts.crawler.defaultRoute;
  const prefix = `${withoutUserinfo(job.data.url)}: `;
  const log: CrawlLog = {
    debug: (message) => parts.log(prefix + message, 'debug'),
    info: (message) => parts.log(prefix + message, 'info'),
    warn: (message) => parts.log(prefix + message, 'warn'),
    error: (message) => parts.log(prefix + message, 'error'),
  };
  const attempt = job.attemptsMade + 1;
  const attemptsLeft = Math.max(0, (job.opts.attempts ?? 1) - attempt);
  const request = { url: job.data.url, label, depth: job.data.depth, group: job.data.group, userData: meta?.userData ?? {}, attempt };
  let decision;
  try {
    decision = await onFailure({ request, error: userError(error), attemptsLeft, log });
  } catch (hookError) {
    // A failing hook must not hide the failure it was asked about.
    log.error(`onFailure threw: ${hookError instanceof Error ? hookError.message : String(hookError)}`);
    return error;
  }
  if (decision === undefined || decision === null) return error;
  if ('retry' in decision && decision.retry === true) {
    return error instanceof UnrecoverableError ? handlerFailure(error, { retryable: true }) : error;
  }
  if ('deadLetter' in decision && decision.deadLetter === true) {
    return handlerFailure(userError(error), { retryable: false, reason: decision.reason, message: decision.message });
  }
  return error;
}

/** What the user's code threw, out of the failure it became; any other error as it is. */
function userError(error: Error): Error {
  return 'handlerStack' in error && error.cause instanceof Error ? error.cause : error;
}
