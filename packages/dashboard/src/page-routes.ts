import { randomBytes } from 'node:crypto';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { CSRF_FIELD, type CsrfToken } from './csrf-token.js';
import type { CrawlOverviews } from './crawl-overview.js';
import type { DeadLetterActions } from './dead-letter-actions.js';
import { CsrfError, GroupNameError, QueryError } from './errors.js';
import { describeFilter, listSearch, parseFilter, parseListQuery } from './filters.js';
import { setFlash, takeFlash, type Flash } from './flash.js';
import { parseSelection, isAll } from './selection.js';
import { deadLetterDetailPage } from './views/dead-letter-detail.js';
import { deadLetterListPage } from './views/dead-letter-list.js';
import type { PageContext } from './views/layout.js';
import { messagePage } from './views/message-page.js';
import { OVERVIEW_FRAGMENT_PATH, PAUSE_CHOICES, overviewFragment, overviewPage } from './views/overview.js';

export interface PageRoutesOptions {
  readonly actions: DeadLetterActions;
  readonly overviews: CrawlOverviews;
  readonly namespace: string;
  readonly csrf: CsrfToken;
  readonly log: (line: string) => void;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * The server-rendered pages: the crawl overview (`/overview`, the landing
 * page) with its group pause/resume forms, the dead-letter list
 * (`/dead-letters`) and detail (`/dead-letters/:id`) with their form actions.
 * Actions redirect back with a one-time message.
 */
export function pageRoutes(options: PageRoutesOptions): Router {
  const { actions, csrf } = options;
  const router = Router();

  // Every page gets a fresh nonce: only our own inline style and script run.
  router.use((_req, res, next) => {
    const nonce = randomBytes(16).toString('base64');
    res.locals.nonce = nonce;
    res.set({
      // connect-src: the overview fetches itself to refresh.
      'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      'Cache-Control': 'no-store',
    });
    next();
  });

  const context = (req: Request, res: Response, flash?: Flash): PageContext => ({
    namespace: options.namespace,
    nonce: String(res.locals.nonce),
    csrfToken: csrf.value,
    flash: flash ?? takeFlash(req, res),
  });

  // Browsers ask for it whatever the page says; nothing to show, and no 404 in their console.
  router.get('/favicon.ico', (_req, res) => res.status(204).end());

  router.get('/', (_req, res) => res.redirect(302, '/overview'));
  // The digest e-mails of older setups link to /dlq.
  router.get('/dlq', (_req, res) => res.redirect(302, '/dead-letters'));

  router.get('/overview', async (req, res) => {
    res.type('html').send(overviewPage(context(req, res), await options.overviews.read()));
  });

  router.get(OVERVIEW_FRAGMENT_PATH, async (_req, res) => {
    res.type('html').send(overviewFragment({ csrfToken: csrf.value }, await options.overviews.read()).value);
  });

  router.get('/dead-letters', async (req, res) => {
    const query = parseListQuery(req.query);
    // One more than a page tells whether an "Older" link is needed.
    const [page, stats] = await Promise.all([actions.list({ ...query, limit: query.limit + 1 }), actions.stats()]);
    res.type('html').send(
      deadLetterListPage(context(req, res), { query, entries: page.slice(0, query.limit), hasMore: page.length > query.limit, stats }),
    );
  });

  router.get('/dead-letters/:id', async (req, res) => {
    const entry = await actions.show(req.params.id);
    if (entry === null) {
      res.status(404).type('html').send(messagePage(context(req, res), { title: 'Not found', text: `No dead letter with id ${req.params.id}.` }));
      return;
    }
    res.type('html').send(deadLetterDetailPage(context(req, res), entry));
  });

  const forms = Router();
  forms.use(express.urlencoded({ extended: false, limit: '16kb' }));
  forms.use((req, _res, next) => {
    if (req.method !== 'POST') {
      next();
      return;
    }
    const body = req.body as Record<string, unknown> | undefined;
    next(csrf.matches(body?.[CSRF_FIELD]) ? undefined : new CsrfError('the form is missing its CSRF token, or it is stale; reload the page'));
  });

  /** Back to the list the form was on (its filter only: never a URL taken from the request). */
  const back = (req: Request, res: Response, flash: Flash): void => {
    setFlash(res, flash);
    res.redirect(303, `/dead-letters${listSearch(parseFilter(req.body as Record<string, unknown> | undefined))}`);
  };

  forms.post('/dead-letters/retry', async (req, res) => {
    const selection = parseSelection(req.body);
    const retried = await actions.retry(selection);
    back(req, res, { kind: 'ok', text: `Retried ${plural(retried, 'dead letter')} (${isAll(selection) ? 'all' : describeFilter(selection)}).` });
  });

  forms.post('/dead-letters/purge', async (req, res) => {
    const selection = parseSelection(req.body);
    const purged = await actions.purge(selection);
    back(req, res, { kind: 'ok', text: `Purged ${plural(purged, 'dead letter')} (${isAll(selection) ? 'all' : describeFilter(selection)}).` });
  });

  forms.post('/dead-letters/:id/retry', async (req, res) => {
    const entry = await actions.show(req.params.id);
    const retried = entry === null ? 0 : await actions.retryOne(req.params.id);
    back(
      req,
      res,
      retried > 0 && entry !== null
        ? { kind: 'ok', text: `Retried ${entry.url}: it is back in the crawl queue.` }
        : { kind: 'error', text: `No dead letter ${req.params.id} to retry (already retried or purged?).` },
    );
  });

  forms.post('/dead-letters/:id/purge', async (req, res) => {
    const entry = await actions.show(req.params.id);
    const purged = entry === null ? 0 : await actions.purgeOne(req.params.id);
    back(
      req,
      res,
      purged > 0 && entry !== null
        ? { kind: 'ok', text: `Purged the dead letter for ${entry.url}.` }
        : { kind: 'error', text: `No dead letter ${req.params.id} to purge (already retried or purged?).` },
    );
  });

  /** Back to the overview with a message. */
  const toOverview = (res: Response, flash: Flash): void => {
    setFlash(res, flash);
    res.redirect(303, '/overview');
  };

  forms.post('/groups/:group/pause', async (req, res) => {
    const raw = (req.body as Record<string, unknown> | undefined)?.for;
    const choice = PAUSE_CHOICES.find((option) => String(option.ms) === raw);
    if (choice === undefined) throw new QueryError('for', `for: expected one of ${PAUSE_CHOICES.map((option) => option.ms).join(', ')} (ms)`);
    await options.overviews.pause(req.params.group, choice.ms);
    toOverview(res, { kind: 'ok', text: `Paused ${req.params.group} for ${choice.label} on every worker.` });
  });

  forms.post('/groups/:group/resume', async (req, res) => {
    const woken = await options.overviews.resume(req.params.group);
    toOverview(res, { kind: 'ok', text: `Resumed ${req.params.group} (${plural(woken, 'deferred job')} woken).` });
  });

  router.use(forms);

  // eslint-disable-next-line max-params -- Express tells error handlers apart by their four parameters.
  const onError: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    const [status, title, text] =
      error instanceof CsrfError
        ? [403, 'Forbidden', error.message]
        : error instanceof QueryError || error instanceof GroupNameError
          ? [400, 'Bad request', error.message]
          : [500, 'Something went wrong', 'The dashboard could not do that; see its log.'];
    if (status === 500) options.log(`dashboard: ${req.method} ${req.path} failed: ${error instanceof Error ? error.message : String(error)}`);
    res.status(status).type('html').send(messagePage(context(req, res, { kind: 'error', text }), { title, text: `${req.method} ${req.path}` }));
  };
  router.use(onError);
  return router;
}
