import express, { Router, type ErrorRequestHandler } from 'express';
import type { CrawlProgress } from '@crawlq/frontier';
import { MAX_PAUSE_MS, type CrawlOverviews } from './crawl-overview.js';
import type { DeadLetterActions } from './dead-letter-actions.js';
import { ApiError, GroupNameError, QueryError } from './errors.js';
import { parseListQuery } from './filters.js';
import { parseSelection } from './selection.js';

export interface ApiRoutesOptions {
  readonly actions: DeadLetterActions;
  readonly overviews: CrawlOverviews;
  /** The crawl's backlog and queue counts, read in one step (`readCrawlProgress`). */
  readonly crawlProgress: () => Promise<CrawlProgress>;
  readonly log: (line: string) => void;
}

/**
 * The JSON API, mounted at `/api`. POSTs must say `Content-Type:
 * application/json`: a page of another site can only send that after a CORS
 * preflight, which this server never approves, so it is a CSRF guard that
 * costs scripts (curl) one header.
 */
export function apiRoutes(options: ApiRoutesOptions): Router {
  const { actions } = options;
  const router = Router();
  router.use((req, res, next) => {
    res.set('Cache-Control', 'no-store');
    if (req.method === 'POST' && !/^application\/json\s*(?:;|$)/i.test(req.headers['content-type'] ?? '')) {
      next(new ApiError(415, 'POST requests need Content-Type: application/json'));
      return;
    }
    next();
  });
  router.use(express.json({ limit: '16kb' }));

  router.get('/dead-letters', async (req, res) => {
    const query = parseListQuery(req.query);
    const entries = await actions.list(query);
    res.json({ entries: entries, limit: query.limit, offset: query.offset });
  });

  router.get('/stats', async (_req, res) => {
    const [stats, crawl] = await Promise.all([actions.stats(), options.crawlProgress()]);
    res.json({ ...stats, crawl });
  });

  router.get('/overview', async (_req, res) => {
    res.json(await options.overviews.read());
  });

  // The charts' series: from the readings this dashboard took, no Redis read.
  router.get('/history', (_req, res) => {
    res.json(options.overviews.history());
  });

  router.post('/groups/:group/pause', async (req, res) => {
    const forMs = (req.body as Record<string, unknown> | undefined)?.forMs ?? 600_000;
    if (typeof forMs !== 'number' || !Number.isInteger(forMs) || forMs < 1 || forMs > MAX_PAUSE_MS) {
      throw new ApiError(400, `forMs: expected a whole number of ms from 1 to ${MAX_PAUSE_MS}`);
    }
    await options.overviews.pause(req.params.group, forMs);
    res.json({ paused: req.params.group, forMs });
  });

  router.post('/groups/:group/resume', async (req, res) => {
    res.json({ resumed: req.params.group, woken: await options.overviews.resume(req.params.group) });
  });

  router.post('/dead-letters/retry', async (req, res) => {
    res.json({ retried: await actions.retry(parseSelection(req.body)) });
  });

  router.post('/dead-letters/purge', async (req, res) => {
    res.json({ purged: await actions.purge(parseSelection(req.body)) });
  });

  router.get('/dead-letters/:id', async (req, res) => {
    const entry = await actions.show(req.params.id);
    if (entry === null) throw new ApiError(404, `no dead letter with id ${req.params.id}`);
    res.json(entry);
  });

  router.post('/dead-letters/:id/retry', async (req, res) => {
    const retried = await actions.retryOne(req.params.id);
    if (retried === 0) throw new ApiError(404, `no dead letter with id ${req.params.id}`);
    res.json({ retried });
  });

  router.post('/dead-letters/:id/purge', async (req, res) => {
    const purged = await actions.purgeOne(req.params.id);
    if (purged === 0) throw new ApiError(404, `no dead letter with id ${req.params.id}`);
    res.json({ purged });
  });

  router.use((_req, _res, next) => next(new ApiError(404, 'no such API route')));

  // eslint-disable-next-line max-params -- Express tells error handlers apart by their four parameters.
  const onError: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    // body-parser's errors (bad JSON, too large) carry their 4xx status.
    const bodyStatus = (error as { status?: unknown; expose?: unknown }).expose === true ? (error as { status?: unknown }).status : undefined;
    if (error instanceof ApiError || error instanceof QueryError || error instanceof GroupNameError || typeof bodyStatus === 'number') {
      const status = error instanceof ApiError ? error.status : error instanceof QueryError || error instanceof GroupNameError ? 400 : Number(bodyStatus);
      res.status(status).json({ error: error instanceof Error ? error.message : 'bad request' });
      return;
    }
    options.log(`dashboard: ${req.method} /api${req.path} failed: ${error instanceof Error ? error.message : String(error)}`);
    res.status(500).json({ error: 'internal error; see the dashboard log' });
  };
  router.use(onError);
  return router;
}
