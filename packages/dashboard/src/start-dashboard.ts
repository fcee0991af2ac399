import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router, type RequestHandler } from 'express';
import { openFleetAdmin, type FleetAdmin } from '@crawlq/crawl-control';
import { readCrawlProgress } from '@crawlq/frontier';
import { detectRedisCluster, shardOfGroup } from '@crawlq/redis';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import type { CrawlJobPolicy } from '@crawlq/queue';
import { apiRoutes } from './api-routes.js';
import { basicAuth, type DashboardAuth } from './basic-auth.js';
import { BULL_BOARD_CSP, BULL_BOARD_PATH, bullBoard, localAssetsOnly, type BullBoard } from './bull-board.js';
import { createCrawlOverviews } from './crawl-overview.js';
import { CsrfToken } from './csrf-token.js';
import { createDeadLetterActions } from './dead-letter-actions.js';
import { DashboardConfigError, DashboardStartError } from './errors.js';
import { isLoopbackHost } from './loopback.js';
import { openDashboardQueues, type QueueConnection } from './open-queues.js';
import { chartAssets } from './chart-assets.js';
import { pageRoutes } from './page-routes.js';
import { OVERVIEW_REFRESH_MS } from './views/overview.js';
import { loopbackHostOnly, sameOriginWrites } from './request-guards.js';

/** Default bind address: this machine only. */
export const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
/** Default port. */
export const DEFAULT_DASHBOARD_PORT = 3100;

export interface DashboardOptions {
  /** Redis of the crawl. Its password is never shown nor logged. */
  readonly redisUrl: string;
  readonly namespace: string;
  /**
   * Bind address. Anything but a loopback literal (`127.0.0.1`, `::1`,
   * `localhost`) requires `auth`. @default '127.0.0.1'
   */
  readonly host?: string;
  /** TCP port; 0 picks a free one (see `Dashboard.url`). @default 3100 */
  readonly port?: number;
  /** HTTP basic auth on every route (pages, API, bull-board). @default none, loopback only */
  readonly auth?: DashboardAuth;
  /** Attempts and backoff a retried dead letter gets in the crawl queue. */
  readonly jobPolicy: CrawlJobPolicy;
  /** Receives one line per start, action and server error. @default discard */
  readonly log?: (line: string) => void;
  /**
   * Answers `/healthz`, `/readyz` (before auth: probes carry no credentials)
   * and `/metrics` (behind auth when it is set); returns false for other paths.
   * @default none
   */
  readonly opsEndpoints?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

/** A running dashboard. */
export interface Dashboard {
  /** Base URL, e.g. `http://127.0.0.1:3100` (the port actually bound). */
  readonly url: string;
  /** Stops accepting requests, ends open connections, closes queues and Redis connections. Idempotent. */
  close(): Promise<void>;
}

function validate(options: DashboardOptions): { host: string; port: number } {
  const host = options.host ?? DEFAULT_DASHBOARD_HOST;
  const port = options.port ?? DEFAULT_DASHBOARD_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new DashboardConfigError('port', `port: expected 0..65535 (got ${port})`);
  if (options.auth !== undefined && (options.auth.user === '' || options.auth.user.includes(':') || options.auth.password === '')) {
    throw new DashboardConfigError('auth', 'auth: the user must be non-empty without ":", and the password non-empty');
  }
  if (options.auth === undefined && !isLoopbackHost(host)) {
    throw new DashboardConfigError(
      'host',
      `refusing to serve the dashboard on ${host} without auth: anyone who can reach it could retry and purge dead letters. ` +
        'Set a user and password (CRAWLQ_DASHBOARD_USER / CRAWLQ_DASHBOARD_PASSWORD) or bind to 127.0.0.1.',
    );
  }
  const { attempts, backoffMs } = options.jobPolicy;
  if (!Number.isInteger(attempts) || attempts < 1 || !Number.isFinite(backoffMs) || backoffMs < 0) {
    throw new DashboardConfigError('jobPolicy', `jobPolicy: expected attempts >= 1 and backoffMs >= 0 (got ${attempts}, ${backoffMs})`);
  }
  if (options.namespace === '') throw new DashboardConfigError('namespace', 'namespace: must not be empty');
  return { host, port };
}

/**
 * bull-board, shown with the crawl's queues as they are now: its API calls
 * (the UI polls them) first look whether the crawl's shard layout changed
 * since, one read of Redis, as the overview does.
 */
function followCrawlShards(board: BullBoard, admin: FleetAdmin): RequestHandler {
  let shown = admin.queues;
  const follow: RequestHandler = (req, _res, next) => {
    if (!req.path.startsWith('/api/')) return next();
    admin
      .followLayout()
      .catch(() => undefined) // Redis away: bull-board's own call says so
      .then(() => {
        if (admin.queues !== shown) {
          shown = admin.queues;
          board.showCrawlShards(shown);
        }
        next();
      })
      .catch(next);
  };
  return Router().use(follow, board.router);
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Starts the operator dashboard: the crawl overview at `/overview` (the
 * landing page: progress, rate, statuses, groups with pause/resume), the
 * dead-letter view at `/dead-letters`, their JSON API at `/api`, and
 * bull-board at `/queues`.
 *
 * Listens on loopback by default and refuses a public address without
 * `auth`. State-changing requests from other sites are refused (same-origin
 * check on every POST/PUT/DELETE, a CSRF token on forms, JSON-only API).
 * Checks that Redis answers before it listens.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const { host, port } = validate(options);
  const log = options.log ?? (() => undefined);
  // The queues below open before any connectRedis: ask first whether the URL names a cluster.
  await detectRedisCluster(options.redisUrl);
  // Fail fast rather than queue requests while Redis is down: a page should error, not hang.
  const connection: QueueConnection = { url: options.redisUrl, maxRetriesPerRequest: 1 };
  const queues = openDashboardQueues(connection, options.namespace);
  const deadLetters = createDeadLetterAdmin({ connection, namespace: options.namespace });
  let admin: FleetAdmin | undefined;
  const closeRedis = async (): Promise<void> => {
    await Promise.all([queues.close(), deadLetters.close().catch(() => undefined), admin?.close()]);
  };

  try {
    await deadLetters.count();
    admin = await openFleetAdmin(options.redisUrl, options.namespace);
  } catch (error) {
    await closeRedis();
    // The cause is ioredis's message (host and port, never the password); the URL itself is not repeated.
    throw new DashboardStartError(`dashboard: cannot reach Redis for namespace "${options.namespace}": ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }

  const fleetAdmin = admin;
  const actions = createDeadLetterActions({
    deadLetters,
    crawlQueueOf: async () => {
      await fleetAdmin.followLayout();
      const shards = fleetAdmin.queues;
      return (group) => shards[shardOfGroup(group, shards.length)] ?? queues.crawl;
    },
    jobPolicy: options.jobPolicy,
    log,
  });
  const overviews = createCrawlOverviews({ admin, deadLetters, log });
  // A first reading now, so the first page already has a rate to show; then
  // one every refresh period, so the charts have a history when someone looks.
  await overviews.read().catch(() => undefined);
  const sampler = setInterval(() => void overviews.read().catch(() => undefined), OVERVIEW_REFRESH_MS);
  sampler.unref();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.set({
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      // `same-origin`, not `no-referrer`: with no-referrer browsers send `Origin: null` on form POSTs.
      'Referrer-Policy': 'same-origin',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
    });
    next();
  });
  const ops = options.opsEndpoints;
  if (ops) app.get(['/healthz', '/readyz'], (req, res, next) => (ops(req, res) ? undefined : next()));
  // Without auth, trust rests on "only this machine": refuse DNS-rebound Host names too.
  app.use(options.auth === undefined ? loopbackHostOnly() : basicAuth(options.auth));
  if (ops) app.get('/metrics', (req, res, next) => (ops(req, res) ? undefined : next()));
  app.use(sameOriginWrites());
  const fleet = admin;
  app.use('/api', apiRoutes({ actions, overviews, crawlProgress: () => readCrawlProgress(fleet.redis, options.namespace), log }));
  app.use(
    BULL_BOARD_PATH,
    (_req, res, next) => {
      res.set('Content-Security-Policy', BULL_BOARD_CSP);
      next();
    },
    localAssetsOnly(),
    followCrawlShards(bullBoard(queues, admin.queues), admin),
  );
  app.use(chartAssets());
  app.use(pageRoutes({ actions, overviews, namespace: options.namespace, csrf: new CsrfToken(), log }));
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found\n');
  });

  const server = createServer(app);
  let address: AddressInfo;
  try {
    address = await listen(server, host, port);
  } catch (error) {
    clearInterval(sampler);
    await closeRedis();
    throw new DashboardStartError(`dashboard: cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const shownHost = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;
  log(`dashboard: listening on ${url} (namespace ${options.namespace}${options.auth === undefined ? ', no auth, loopback only' : ', basic auth'})`);

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        clearInterval(sampler);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections (browsers, bull-board polling) would hold close() open.
        server.closeAllConnections();
        await closed;
        await closeRedis();
        log('dashboard: closed');
      })()),
  };
}
