import { Gauge, type Registry } from 'prom-client';
import type { BoundedReadResult } from './bounded-read.js';
import { REVISIT_METRIC_GROUPS, type FleetState, type FleetStateReader } from './fleet-state.js';

/**
 * Longest a scrape waits for a fleet read from Redis. Prometheus gives up on
 * a scrape after 10 s by default and a probe after 1 s: a scrape answers
 * within this plus the time to print the page, whatever Redis does.
 */
export const FLEET_SCRAPE_WAIT_MS = 500;

/**
 * `crawlq_queue_jobs{state}`, `crawlq_groups{state}`, `crawlq_servers{state}` and the
 * `crawlq_revisit_*` gauges (per group for REVISIT_METRIC_GROUPS groups), read from Redis at
 * scrape time (at most `FLEET_SCRAPE_WAIT_MS` waited for). When Redis does
 * not answer, the figures of the last good read stay, `crawlq_fleet_read_ok`
 * turns 0 and `crawlq_fleet_read_age_seconds` says how old they are.
 */
export function registerFleetGauges(registry: Registry, reader: FleetStateReader, options: { readonly waitMs?: number } = {}): void {
  const registers = [registry];
  const waitMs = options.waitMs ?? FLEET_SCRAPE_WAIT_MS;
  // prom-client collects metrics concurrently: the gauges of one scrape (and
  // scrapes arriving meanwhile) share one wait and so one view of the fleet.
  let shared: Promise<BoundedReadResult<FleetState>> | undefined;
  const snapshot = (): Promise<BoundedReadResult<FleetState>> => {
    shared ??= reader.snapshot(waitMs).finally(() => (shared = undefined));
    return shared;
  };
  new Gauge({
    name: 'crawlq_queue_jobs',
    help: 'Crawl URLs by state, fleet-wide: backlog (admitted, not yet jobs), waiting, delayed, active; due = backlog + waiting + delayed within the next minute',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      if (state) for (const [name, value] of Object.entries(state.queue) as [string, number][]) this.labels(name).set(value);
    },
  });
  new Gauge({
    name: 'crawlq_groups',
    help: 'Politeness groups by state, fleet-wide (a group may be in several)',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      if (state) for (const [name, value] of Object.entries(state.groups) as [string, number][]) this.labels(name).set(value);
    },
  });
  new Gauge({
    name: 'crawlq_servers',
    help: 'Servers (the addresses behind the hosts) the server level counted, by state, fleet-wide: known, active (requests in flight, capped servers only), blocked (at their concurrency cap), waiting (denied requests wait for a slot)',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      if (state) for (const [name, value] of Object.entries(state.servers) as [string, number][]) this.labels(name).set(value);
    },
  });
  new Gauge({
    name: 'crawlq_revisit_urls',
    help: 'Continuous crawl (--revisit), fleet-wide: known URLs (fetched, scheduled, not retired), due_now and due_next_hour (schedule entries due now and within the hour)',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      if (state) {
        this.labels('known').set(state.revisits.known);
        this.labels('due_now').set(state.revisits.dueNow);
        this.labels('due_next_hour').set(state.revisits.dueNextHour);
      }
    },
  });
  new Gauge({
    name: 'crawlq_revisit_fetches',
    help: 'Continuous crawl, fleet-wide since it began: fetches under a revisit policy by outcome: first (a new URL), changed, unchanged (200 with the same content signature), not_modified (304), gone (404/410); retired counts URLs dropped after 3 gone in a row',
    labelNames: ['outcome'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      if (state) {
        const { first, changed, unchanged, notModified, gone, retired } = state.revisits;
        for (const [outcome, value] of Object.entries({ first, changed, unchanged, not_modified: notModified, gone, retired })) this.labels(outcome).set(value);
      }
    },
  });
  new Gauge({
    name: 'crawlq_revisit_bytes_saved',
    help: 'Continuous crawl, fleet-wide since it began: body bytes that 304 answers did not send (each the last full body size, within 5%)',
    registers,
    async collect() {
      const { value: state } = await snapshot();
      if (state) this.set(state.revisits.bytesSaved);
    },
  });
  new Gauge({
    name: 'crawlq_revisit_group_known',
    help: `Continuous crawl: known URLs of each of the ${REVISIT_METRIC_GROUPS} groups with the most (the label is bounded so; every group: crawlq group list --revisits)`,
    labelNames: ['group'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      for (const figures of state?.revisitGroups ?? []) this.labels(figures.group).set(figures.known);
    },
  });
  new Gauge({
    name: 'crawlq_revisit_group_fetches',
    help: `Continuous crawl, since it began, for the ${REVISIT_METRIC_GROUPS} groups with the most known URLs: fetches under a revisit policy by outcome, as crawlq_revisit_fetches`,
    labelNames: ['group', 'outcome'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      for (const { group, first, changed, unchanged, notModified, gone, retired } of state?.revisitGroups ?? []) {
        for (const [outcome, value] of Object.entries({ first, changed, unchanged, not_modified: notModified, gone, retired })) this.labels(group, outcome).set(value);
      }
    },
  });
  new Gauge({
    name: 'crawlq_revisit_group_bytes_saved',
    help: `Continuous crawl, since it began, for the ${REVISIT_METRIC_GROUPS} groups with the most known URLs: body bytes 304 answers did not send`,
    labelNames: ['group'],
    registers,
    async collect() {
      this.reset();
      const { value: state } = await snapshot();
      for (const figures of state?.revisitGroups ?? []) this.labels(figures.group).set(figures.bytesSaved);
    },
  });
  new Gauge({
    name: 'crawlq_fleet_read_ok',
    help: '1 when the fleet gauges are current: the last read from Redis succeeded and none since went unanswered past its timeout; else 0 (the gauges keep the last good read)',
    registers,
    async collect() {
      this.set((await snapshot()).ok ? 1 : 0);
    },
  });
  new Gauge({
    name: 'crawlq_fleet_read_age_seconds',
    help: 'Seconds since the fleet gauges were last read from Redis successfully (+Inf before the first good read)',
    registers,
    async collect() {
      const { readAt } = await snapshot();
      this.set(readAt === undefined ? Number.POSITIVE_INFINITY : Math.max(0, Date.now() - readAt) / 1000);
    },
  });
}
