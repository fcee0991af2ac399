import { Gauge, type Registry } from 'prom-client';

/**
 * A few process figures, read at scrape time. prom-client's default set is
 * not used: some of its gauges end in `_total`, which Prometheus's own linter
 * (promtool check metrics) rejects.
 */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const startedAt = Date.now() / 1000 - process.uptime();
  new Gauge({
    name: 'crawlq_process_resident_memory_bytes',
    help: 'Resident set size of this process',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'crawlq_process_heap_used_bytes',
    help: 'V8 heap in use',
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
  new Gauge({
    name: 'crawlq_process_cpu_seconds',
    help: 'User plus system CPU time this process has used',
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.set((user + system) / 1e6);
    },
  });
  new Gauge({ name: 'crawlq_process_start_time_seconds', help: 'Start time of this process, Unix seconds', registers }).set(startedAt);
}
