import type { DeadLetterEntry } from '@crawlq/dead-letter';
import { redactUrl } from '@crawlq/urls';

/**
 * An entry as the dashboard shows it. `url` is already redacted by the dead
 * letter queue, but `job.url` is the original (retry needs it): it may carry
 * a crawled site's `user:password@` or tokens, so it is redacted too.
 */
export function publicEntry(entry: DeadLetterEntry): DeadLetterEntry {
  return { ...entry, job: { ...entry.job, url: redactUrl(entry.job.url) } };
}
