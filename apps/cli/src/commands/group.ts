import { parseDurationMs, formatRate, type CrawlqConfig } from '@crawlq/config';
import { describeGroupWait, GroupWaits, openCrawlServices, readGroupWaits, resumeGroup, type CrawlServices, type GroupWait } from '@crawlq/crawler';
import type { GlobalStatus, GroupStatus } from '@crawlq/group-limiter';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';
import { withRedis } from '../redis-session.js';

async function withServices<T>(config: CrawlqConfig, body: (services: CrawlServices) => Promise<T>): Promise<T> {
  return withRedis(config, async (redisUrl) => {
    const services = await openCrawlServices(config, redisUrl, { role: 'producer' });
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
    group.command('list').description("Each group's limits, in-flight requests, pause and counters").option('--json', 'machine-readable output'),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const { groups, waits, global } = await withServices(config, async (services) => ({
      groups: await services.limiter.list(),
      waits: await readGroupWaits(services.redis, config.namespace),
      global: await services.limiter.globalStatus(),
    }));
    const waitingFor = waitingForOf(groups, waits);
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(groups.map((status) => ({ ...status, waitingFor: waitingFor.get(status.group) ?? null })))}\n`);
      return;
    }
    process.stdout.write(`${formatGroups(groups, waitingFor)}\n${formatGlobal(global)}\n`);
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
    await withServices(config, async (services) => {
      await services.limiter.pause(name, forMs, 'admin');
      // Shown as the group's reason to wait from now on, and its wait counts toward --max-blocked from now.
      await new GroupWaits(services.redis, config.namespace).note(name, { cause: 'pause', until: Date.now() + forMs, label: 'admin pause' });
    });
    process.stdout.write(`paused ${name} for ${forMs / 1000} s\n`);
  });

  addConfigOptions(group.command('resume').description('Lift a pause on a group').argument('<group>'), ADMIN_OPTIONS).action(
    async (name: string, flags: Record<string, unknown>) => {
      const config = configFrom(flags);
      const woken = await withServices(config, (services) => resumeGroup(services, name));
      process.stdout.write(`resumed ${name} (${woken} deferred job${woken === 1 ? '' : 's'} woken)\n`);
    },
  );
}

/**
 * Why each waiting group waits: the workers' record (robots.txt, pause), else
 * a pause in force that no job has run into yet (an admin's, say).
 */
function waitingForOf(groups: readonly GroupStatus[], waits: readonly GroupWait[]): Map<string, string> {
  const now = Date.now();
  const waitingFor = new Map<string, string>();
  for (const wait of waits) waitingFor.set(wait.group, describeGroupWait(wait, now));
  for (const status of groups) {
    if (waitingFor.has(status.group) || status.pausedUntil === null || status.pausedUntil <= now) continue;
    waitingFor.set(status.group, `pause (${status.pauseReason ?? 'no reason given'}), ${Math.ceil((status.pausedUntil - now) / 1000)} s left`);
  }
  return waitingFor;
}

function formatGroups(groups: readonly GroupStatus[], waitingFor: ReadonlyMap<string, string>): string {
  if (groups.length === 0) return 'no groups yet';
  const now = Date.now();
  // late: starts a worker gave back or re-paced because its event loop made it miss the slot.
  // pace: the spacing the gate really enforces (rate plus its margin, or a longer Crawl-delay).
  const header = ['group', 'rate', 'pace', 'burst', 'concurrency', 'in-flight', 'paused', 'admitted', 'deferred', 'late', 'waiting for'];
  const rows = groups.map((status) => [
    status.group,
    formatRate(status.limits.rate),
    formatPace(status.paceMs),
    String(status.limits.burst),
    status.limits.concurrency === null ? 'unlimited' : String(status.limits.concurrency),
    String(status.inFlight),
    status.pausedUntil !== null && status.pausedUntil > now ? `${Math.ceil((status.pausedUntil - now) / 1000)}s (${status.pauseReason ?? ''})` : '-',
    String(status.admitted),
    String(status.deferred),
    String(status.lateStarts + status.slippedStarts),
    waitingFor.get(status.group) ?? '-',
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')).join('\n');
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
