import { formatRate, type CrawlqConfig } from '@crawlq/config';
import type { ServerOverview } from '@crawlq/crawl-control';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';

async function readServers(config: CrawlqConfig): Promise<ServerOverview[]> {
  const [{ listServers, openCrawlServices, readFleetConfig }, { withRedis }] = await Promise.all([import('@crawlq/crawl-control'), import('../redis-session.js')]);
  return withRedis(config, async (redisUrl) => {
    const fleet = await readFleetConfig(config, redisUrl);
    const services = await openCrawlServices(fleet.config, redisUrl, { role: 'producer' });
    try {
      return await listServers(services);
    } finally {
      await services.close();
    }
  });
}

export function registerServer(program: Command): void {
  const server = program.command('server').description('Inspect the servers (addresses) behind the crawl\'s hosts: the second level of politeness');
  addConfigOptions(
    server.command('list').description("Each server's limits, in-flight requests, counters, what waits on it and the hosts behind it").option('--json', 'machine-readable output'),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const servers = await readServers(configFrom(flags));
    if (flags.json === true) {
      const rows = servers.map((entry) => ({ ...entry, limits: { rate: formatRate(entry.limits.rate), concurrency: entry.limits.concurrency } }));
      process.stdout.write(`${JSON.stringify(rows)}\n`);
      return;
    }
    process.stdout.write(`${formatServers(servers)}\n`);
  });
}

function formatServers(servers: readonly ServerOverview[]): string {
  if (servers.length === 0) return 'no servers yet';
  const header = ['server', 'rule', 'rate', 'pace', 'concurrency', 'in-flight', 'admitted', 'deferred', 'waiting', 'hosts'];
  const rows = servers.map((entry) => {
    const unlimited = entry.limits.rate === null && entry.limits.concurrency === null;
    return [
      entry.server,
      entry.rule ?? '-',
      unlimited ? 'unlimited' : formatRate(entry.limits.rate),
      entry.paceMs > 0 ? `${Math.round(entry.paceMs * 100) / 100} ms` : '-',
      entry.limits.concurrency === null ? '-' : String(entry.limits.concurrency),
      entry.inFlight === null ? '-' : String(entry.inFlight),
      String(entry.admitted),
      String(entry.deferred),
      String(entry.waiting),
      formatHosts(entry.hosts),
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
}

/** `3: a.example, b.example, c.example`, or the first five and how many more. */
function formatHosts(hosts: readonly string[]): string {
  if (hosts.length === 0) return '-';
  const shown = hosts.slice(0, 5).join(', ');
  return `${hosts.length}: ${shown}${hosts.length > 5 ? `, +${hosts.length - 5} more` : ''}`;
}
