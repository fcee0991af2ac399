import { FLEET_OPTIONS, formatOptionValue, isFleetOption, OPTION_TABLE, optionLabel } from '@crawlq/config';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';

/**
 * The environment `config set` reads: only where the crawl is (Redis,
 * namespace, state dir). A CRAWLQ_RATE left in an operator's shell must not
 * change the fleet as a side effect of setting something else.
 */
function adminEnv(): Record<string, string | undefined> {
  const names = new Set<string>(['CRAWLQ_CONFIG', ...ADMIN_OPTIONS.flatMap((name) => OPTION_TABLE[name].env ?? [])]);
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => names.has(name)));
}

export function registerConfig(program: Command): void {
  const config = program.command('config').description("The fleet's crawl definition: the crawl-shaping options every worker of the namespace follows");

  addConfigOptions(config.command('show').description('Print the crawl definition in force: version, who set it and when, every fleet-wide option').option('--json', 'machine-readable output'), ADMIN_OPTIONS).action(
    async (flags: Record<string, unknown>) => {
      const own = configFrom(flags);
      const [{ readFleetConfig }, { withRedis }] = await Promise.all([import('@crawlq/crawl-control'), import('../redis-session.js')]);
      const { definition } = await withRedis(own, (redisUrl) => readFleetConfig(own, redisUrl));
      if (definition === null) {
        process.stderr.write(`crawlq: no crawl definition in namespace "${own.namespace}" yet; the first crawl, enqueue, worker or config set stores one\n`);
        process.exitCode = 1;
        return;
      }
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify({ namespace: own.namespace, ...definition })}\n`);
        return;
      }
      process.stdout.write(`crawl definition of namespace "${own.namespace}": version ${definition.version}, set by ${definition.setBy} at ${definition.setAt}\n`);
      const width = Math.max(...FLEET_OPTIONS.map((name) => optionLabel(name).length));
      for (const name of FLEET_OPTIONS) {
        process.stdout.write(`  ${optionLabel(name).padEnd(width)}  ${formatOptionValue(name, definition.values[name])}\n`);
      }
    },
  );

  addConfigOptions(
    config
      .command('set')
      .description('Change fleet-wide options for every worker of the namespace, live (the version goes up; workers follow within seconds)'),
    [...ADMIN_OPTIONS, ...FLEET_OPTIONS],
    { booleanValues: true },
  ).action(async (flags: Record<string, unknown>) => {
    const own = configFrom(flags, {}, adminEnv());
    const given = own.explicit.filter(isFleetOption);
    if (given.length === 0) {
      process.stderr.write('crawlq config set: give at least one fleet-wide option, e.g. --rate 2/1s (crawlq options lists them)\n');
      process.exitCode = 2;
      return;
    }
    const [{ definitionAuthor, openCrawlServices, publishCrawlDefinition }, { withRedis }] = await Promise.all([import('@crawlq/crawl-control'), import('../redis-session.js')]);
    const published = await withRedis(own, async (redisUrl) => {
      const services = await openCrawlServices(own, redisUrl, { role: 'producer' });
      try {
        return await publishCrawlDefinition(services, definitionAuthor('config set'));
      } finally {
        await services.close();
      }
    });
    const { definition, created, changed } = published;
    const what = created ? given : changed;
    process.stdout.write(
      what.length === 0
        ? `unchanged: the fleet already uses these values (version ${definition.version})\n`
        : `crawl definition version ${definition.version}${created ? ' (new)' : ''}: ${what.map((name) => `${optionLabel(name)} ${formatOptionValue(name, definition.values[name])}`).join(', ')}\n`,
    );
  });
}
