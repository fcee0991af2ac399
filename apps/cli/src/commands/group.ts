import { parseDurationMs, formatRate, type CrawlqConfig } from '@crawlq/config';
import type { CrawlServices, GroupOverview } from '@crawlq/crawl-control';
import type { GlobalStatus } from '@crawlq/group-limiter';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';

async function withServices<T>(config: CrawlqConfig, body: (services: CrawlServices) => Promise<T>): Promise<T> {
  const [{ openCrawlServices, readFleetConfig }, { withRedis }] = await Promise.all([import('@crawlq/crawl-control'), import('../redis-session.js')]);
  return withRedis(config, async (redisUrl) => {
    // The fleet's definition: a sharded crawl keeps each group in its shard's keys.
    const fleet = await readFleetConfig(config, redisUrl);
    const services = await openCrawlServices(fleet.config, redisUrl, { role: 'producer' });
    try {
      // The fleet's policy, so limits shown are the ones in force.
      const policy = await services.limiter.getPolicy();
      if (policy === null) process.stderr.write('note: no crawl has published limits in this namespace yet\n');
      return await body(services);
    } finally {
      await services.close();
    }
  });
}

export function registerGroup(program: Command): void {
  const group = program.command('group').description('Inspect, pause and resume politeness groups (domains) for the whole fleet');

  addConfigOptions(
    group
      .command('list')
      .description("Each group's limits, adaptive pace, in-flight requests, pause and counters")
      .option('--json', 'machine-readable output')
      .option('--revisits', "each group's continuous crawl figures instead: known URLs, due now and within the hour, changed and unchanged revisits, bytes saved"),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const [{ listGroupRevisits, listGroups, serversOfGroups }, { readRevisitProgress, readShardNamespaces }, { formatGroupRevisits, formatRevisits }] = await Promise.all([
      import('@crawlq/crawl-control'),
      import('@crawlq/frontier'),
      import('../output.js'),
    ]);
    if (flags.revisits === true) {
      // The dashboard's overview shows the same figures.
      const read = await withServices(config, (services) => listGroupRevisits(services));
      if (flags.json === true) process.stdout.write(`${JSON.stringify({ groups: read.groups, dueComplete: read.dueComplete })}\n`);
      else process.stdout.write(`${formatGroupRevisits(read)}\n`);
      return;
    }
    // The dashboard's overview page shows the same list.
    const { groups, global, servers, revisits } = await withServices(config, async (services) => ({
      ...(await listGroups(services)),
      servers: await serversOfGroups(services),
      revisits: await readRevisitProgress(services.redis, await readShardNamespaces(services.redis, services.config.namespace)),
    }));
    // A host group carries its port; the hosts resolved are names without one.
    const serversOf = (group: string): string[] => servers.get(group) ?? servers.get(group.replace(/:\d+$/, '')) ?? [];
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(groups.map((status) => ({ ...status, servers: serversOf(status.group) })))}\n`);
      return;
    }
    // The fleet's figures under the table (each group's: --revisits).
    const revisitRows = formatRevisits(revisits);
    const revisitText = revisitRows === undefined ? '' : `continuous crawl, all groups:\n${revisitRows.map(([name, value]) => `  ${name.padEnd(12)} ${value}`).join('\n')}\n`;
    process.stdout.write(`${formatGroups(groups, serversOf)}\n${formatGlobal(global)}\n${revisitText}`);
  });

  addConfigOptions(
    group.command('pause').description('Pause a group on every worker').argument('<group>').option('--for <duration>', 'how long (capped by --max-pause)', '10m'),
    ADMIN_OPTIONS,
  ).action(async (name: string, flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const forMs = typeof flags.for === 'string' ? parseDurationMs(flags.for) : undefined;
    if (forMs === undefined || forMs <= 0) {
      process.stderr.write(`crawlq: --for: expected a duration such as 30s or 10m (got ${JSON.stringify(flags.for)})\n`);
      process.exitCode = 2;
      return;
    }
    const { pauseGroup } = await import('@crawlq/crawl-control');
    await withServices(config, (services) => pauseGroup(services, name, forMs));
    process.stdout.write(`paused ${name} for ${forMs / 1000} s\n`);
  });

  addConfigOptions(group.command('resume').description('Lift a pause on a group').argument('<group>'), ADMIN_OPTIONS).action(
    async (name: string, flags: Record<string, unknown>) => {
      const config = configFrom(flags);
      const { resumeGroup } = await import('@crawlq/crawl-control');
      const woken = await withServices(config, (services) => resumeGroup(services, name));
      process.stdout.write(`resumed ${name} (${woken} deferred job${woken === 1 ? '' : 's'} woken)\n`);
    },
  );
}

function formatGroups(groups: readonly GroupOverview[], serversOf: (group: string) => readonly string[]): string {
  if (groups.length === 0) return 'no groups yet';
  const now = Date.now();
  // late: starts a worker gave back or re-paced because its event loop made it miss the slot.
  // pace: the spacing the gate really enforces (rate plus its margin, or a longer Crawl-delay, over the adaptive share).
  // adaptive: the share of its limits the group runs at (--adaptive) and why it last changed.
  // server: the address(es) its hosts resolve to, each with a gate of its own (`crawlq server list`).
  const header = ['group', 'server', 'rate', 'pace', 'adaptive', 'burst', 'concurrency', 'in-flight', 'paused', 'admitted', 'deferred', 'late', 'waiting for'];
  const rows = groups.map((status) => [
    status.group,
    serversOf(status.group).join(',') || '-',
    formatRate(status.limits.rate),
    formatPace(status.paceMs),
    formatAdaptive(status, now),
    String(status.limits.burst),
    formatConcurrency(status),
    String(status.inFlight),
    status.pausedUntil !== null && status.pausedUntil > now ? `${Math.ceil((status.pausedUntil - now) / 1000)}s (${status.pauseReason ?? ''})` : '-',
    String(status.admitted),
    String(status.deferred),
    String(status.lateStarts + status.slippedStarts),
    status.waitingFor ?? '-',
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')).join('\n');
}

/** `-` (fixed pace), `full`, or `0.5 (HTTP 503, 12 s ago)`: the share of its limits an adapting group runs at, and why. */
function formatAdaptive(status: GroupOverview, now: number): string {
  if (!status.adaptive) return '-';
  const share = status.paceFactor >= 1 ? 'full' : round(status.paceFactor);
  if (status.paceReason === null) return share;
  const ago = status.paceChangedAt === null ? '' : `, ${Math.max(0, Math.round((now - status.paceChangedAt) / 1000))} s ago`;
  return `${share} (${status.paceReason}${ago})`;
}

/** The configured cap, and the one in force when adaptive pacing lowered it: `2 of 8`. */
function formatConcurrency(status: GroupOverview): string {
  const configured = status.limits.concurrency === null ? 'unlimited' : String(status.limits.concurrency);
  if (status.effectiveConcurrency === null || status.effectiveConcurrency === status.limits.concurrency) return configured;
  return `${status.effectiveConcurrency} of ${configured}`;
}

/** Spacing and the requests per second it allows: `210 ms (4.76/s)`. */
function formatPace(paceMs: number): string {
  return paceMs > 0 ? `${round(paceMs)} ms (${round(1000 / paceMs)}/s)` : '-';
}

function formatGlobal(global: GlobalStatus): string {
  if (global.rate === null) return 'global cap: none';
  return `global cap: ${formatRate(global.rate)}, pace ${formatPace(global.paceMs)}, admitted ${global.admitted}, deferred ${global.deferred}`;
}

function round(value: number): string {
  return String(Math.round(value * 100) / 100);
}
