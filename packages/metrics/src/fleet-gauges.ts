import { Gauge, type Registry } from 'prom-client';
import type { FleetState, FleetStateReader } from './fleet-state.js';

/**
 * `crawlq_queue_jobs{state}` and `crawlq_groups{state}`, read from Redis at
 * scrape time. When Redis cannot be read the series are left out (no stale
 * figures) and `crawlq_fleet_read_ok` is 0.
 */
export function registerFleetGauges(registry: Registry, reader: FleetStateReader): void {
  const registers = [registry];
  // prom-client collects metrics concurrently; each gauge awaits the reader,
  // whose cache makes that one Redis read per scrape.
  const read = (): Promise<FleetState | undefined> => reader.read().catch(() => undefined);
  new Gauge({
    name: 'crawlq_queue_jobs',
    help: 'Crawl URLs by state, fleet-wide: backlog (admitted, not yet jobs), waiting, delayed, active; due = backlog + waiting + delayed within the next minute',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const state = await read();
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
      const state = await read();
      if (state) for (const [name, value] of Object.entries(state.groups) as [string, number][]) this.labels(name).set(value);
    },
  });
  new Gauge({
    name: 'crawlq_fleet_read_ok',
    help: '1 when the fleet gauges could be read from Redis at this scrape, else 0',
    registers,
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
}
