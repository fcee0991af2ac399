import type { IncomingMessage, ServerResponse } from 'node:http';
import { startStatsLine, type Logger } from '@crawlq/logging';
import { detectRedisCluster } from '@crawlq/redis';
import { Registry } from 'prom-client';
import { CrawlMetrics, type PageObservation, type PaceChangeObservation } from './crawl-metrics.js';
import { registerFleetGauges } from './fleet-gauges.js';
import { FleetStateReader } from './fleet-state.js';
import { createOpsHandler, startMetricsServer } from './metrics-server.js';
import { registerProcessMetrics } from './process-metrics.js';
import { openProbeConnection, watchRedisHealth } from './redis-health.js';

export interface ObservabilityOptions {
  readonly redisUrl: string;
  readonly namespace: string;
  readonly logger: Logger;
  /** A worker counts pages and logs stats lines; the dashboard only reports the fleet. */
  readonly role: 'worker' | 'dashboard';
  /** Unset: no HTTP endpoints (metrics are still counted for the stats line). */
  readonly metricsPort?: number;
  /** @default '127.0.0.1' */
  readonly metricsHost?: string;
  /** 0 or unset: no stats line. */
  readonly statsIntervalMs?: number;
}

export interface Observability {
  /** Page, retry, denial and dead-letter counters (a worker's); undefined on the dashboard. */
  readonly crawl: CrawlMetrics | undefined;
  /** Base URL of /metrics, /healthz, /readyz when a port was given. */
  readonly url: string | undefined;
  /** The same endpoints for a server the app already runs (the dashboard); false: not an ops path. */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean;
  /** Whether the process takes work now (`/readyz`). */
  setReady(ready: boolean): void;
  /** Hooks a crawl worker calls (the crawler's WorkerTelemetry shape). */
  readonly telemetry: {
    page(page: PageObservation): void;
    /** A deferral, why and for how long (ms): the time is what `crawlq_gate_deferred_seconds{level}` observes. */
    denied(reason: string, retryInMs?: number): void;
    retried(count: number): void;
    deadLettered(reason: string): void;
    paceChanged(change: PaceChangeObservation): void;
    ready(ready: boolean): void;
  };
  close(): Promise<void>;
}

/**
 * Wires one process's metrics: its own counters, the fleet gauges read from
 * Redis, the HTTP endpoints and the periodic stats line. Apps call this once.
 */
export async function startObservability(options: ObservabilityOptions): Promise<Observability> {
  // Apps may start this before any other connection: the probe must know whether the URL names a cluster.
  await detectRedisCluster(options.redisUrl);
  const probe = openProbeConnection(options.redisUrl);
  const reader = new FleetStateReader({ redis: probe, namespace: options.namespace });
  let registry: Registry;
  let crawl: CrawlMetrics | undefined;
  if (options.role === 'worker') {
    crawl = new CrawlMetrics();
    registry = crawl.registry;
  } else {
    registry = new Registry();
    registerProcessMetrics(registry);
  }
  registerFleetGauges(registry, reader);

  let ready = false;
  // Probes and scrapes answer from memory or after a short wait, never held by a Redis that does not answer.
  const health = watchRedisHealth(probe);
  const ops = { registry, healthy: () => Promise.resolve(health.report()), ready: () => ready };
  let server;
  try {
    server =
      options.metricsPort === undefined
        ? undefined
        : await startMetricsServer({ ...ops, host: options.metricsHost ?? '127.0.0.1', port: options.metricsPort });
  } catch (error) {
    health.stop();
    probe.disconnect();
    throw error;
  }
  if (server) options.logger.info({ metricsUrl: `${server.url}/metrics` }, `metrics on ${server.url}/metrics (health: /healthz, /readyz)`);

  const stopStats = crawl
    ? startStatsLine({
        intervalMs: options.statsIntervalMs ?? 0,
        logger: options.logger,
        read: async () => {
          const counters = crawl.counters();
          const fleet = await reader.read().catch(() => undefined);
          return {
            ...counters,
            ...(fleet ? { groupsWaiting: { paused: fleet.groups.paused, 'at their concurrency cap': fleet.groups.blocked, 'slowed down': fleet.groups.slowed } } : {}),
          };
        },
      })
    : () => undefined;

  return {
    crawl,
    url: server?.url,
    handle: createOpsHandler(ops),
    setReady(value) {
      ready = value;
    },
    telemetry: {
      page: (page) => crawl?.page(page),
      denied: (reason, retryInMs) => crawl?.denied(reason, retryInMs),
      retried: (count) => crawl?.retried(count),
      deadLettered: (reason) => crawl?.deadLettered(reason),
      paceChanged: (change) => crawl?.paceChanged(change),
      ready: (value) => {
        ready = value;
      },
    },
    async close() {
      stopStats();
      await server?.close();
      health.stop();
      probe.disconnect();
    },
  };
}
