import { request as httpRequest } from 'node:http';
import { createDeadLetterAdmin, createDeadLetterRecorder, type DeadLetterAdmin, type DeadLetterRecorder } from '@crawlq/dead-letter';
import { CRAWL_JOB_NAME, crawlJobOptions, openCrawlQueue, type CrawlQueue } from '@crawlq/queue';

/** The crawl queue and dead letters of one namespace, opened by a test: `recorder` seeds, `dlq` checks. */
export interface Namespace {
  readonly namespace: string;
  readonly crawl: CrawlQueue;
  readonly recorder: DeadLetterRecorder;
  readonly dlq: DeadLetterAdmin;
  close(): Promise<void>;
}

export function openNamespace(redisUrl: string, namespace: string): Namespace {
  const connection = { url: redisUrl };
  const crawl = openCrawlQueue(connection, namespace);
  const recorder = createDeadLetterRecorder({ connection, namespace });
  const dlq = createDeadLetterAdmin({ connection, namespace });
  return {
    namespace,
    crawl,
    recorder,
    dlq,
    async close() {
      await crawl.close();
      await recorder.close();
      await dlq.close();
    },
  };
}

/**
 * Dead-letters a real crawl job: added to the crawl queue, then recorded
 * with the error a worker would have seen (an HTTP 503), which also removes
 * it from the crawl queue as a worker's final failure would.
 */
export async function seedDeadLetter(
  space: Namespace,
  spec: { id: string; url: string; group: string; error?: Error },
): Promise<void> {
  const job = await space.crawl.add(
    CRAWL_JOB_NAME,
    { url: spec.url, depth: 1, group: spec.group },
    { ...crawlJobOptions({ attempts: 1, backoffMs: 10 }), jobId: spec.id },
  );
  const error = spec.error ?? Object.assign(new Error('HTTP 503'), { status: 503 });
  const { created } = await space.recorder.record({ job, error, workerId: 'test-host:1' });
  if (!created) throw new Error(`seeding ${spec.id}: entry already existed`);
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A plain HTTP request with exactly the headers given (no fetch-added Sec-Fetch-* or Origin). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A JSON API call; POSTs say Content-Type: application/json. */
export async function api(
  base: string,
  path: string,
  options: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: unknown }> {
  const method = options.method ?? 'GET';
  const body = options.body === undefined ? (method === 'POST' ? '{}' : undefined) : JSON.stringify(options.body);
  const response = await request(`${base}${path}`, {
    method,
    headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, json: JSON.parse(response.body) as unknown };
}


/** The value of the hidden CSRF field in a page. */
export function csrfTokenOf(page: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  if (token === undefined) throw new Error('no CSRF token in the page');
  return token;
}
