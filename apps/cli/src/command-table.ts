import type { Command } from 'commander';

/** How a command is listed in `crawlq --help`, and where its module is. */
export interface CommandEntry {
  /** As listed: name and arguments. */
  readonly term: string;
  /** Must equal the description the module registers (test/cli-startup.test.ts checks). */
  readonly description: string;
  readonly load: () => Promise<(program: Command) => void>;
}

/**
 * Every command, loaded only when it runs: `crawlq --help` and small commands
 * must not pay for the crawler, BullMQ, express and cheerio. A command's own
 * module loads what reaches Redis, PostgreSQL or the crawl only once its
 * options are read (dynamic imports in its actions): input it refuses is
 * answered in about half a start's CPU. `worker` is the exception: a worker
 * `crawl` starts ahead loads its code while it waits to be told to start.
 */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  crawl: {
    term: 'crawl <seed-url...>',
    description: 'Crawl from the seeds on this machine until the frontier is drained',
    load: async () => (await import('./commands/crawl.js')).registerCrawl,
  },
  enqueue: {
    term: 'enqueue [url...]',
    description: 'Validate, normalise and enqueue seed URLs (arguments, a file, or - for stdin)',
    load: async () => (await import('./commands/enqueue.js')).registerEnqueue,
  },
  worker: {
    term: 'worker',
    description: 'Run a long-lived worker; start any number, on any machines sharing one Redis',
    load: async () => (await import('./commands/worker.js')).registerWorker,
  },
  status: {
    term: 'status',
    description: 'Queue counts; done is true when nothing is left to crawl',
    load: async () => (await import('./commands/status.js')).registerStatus,
  },
  demo: {
    term: 'demo',
    description: 'Serve a bundled demo site on loopback (3 hosts, 300 pages, broken links, a slow page) and crawl it',
    load: async () => (await import('./commands/demo.js')).registerDemo,
  },
  group: {
    term: 'group',
    description: 'Inspect, pause and resume politeness groups (domains) for the whole fleet',
    load: async () => (await import('./commands/group.js')).registerGroup,
  },
  server: {
    term: 'server',
    description: "Inspect the servers (addresses) behind the crawl's hosts: the second level of politeness",
    load: async () => (await import('./commands/server.js')).registerServer,
  },
  dlq: {
    term: 'dlq',
    description: 'Review dead letters: jobs that used all their attempts or failed permanently',
    load: async () => (await import('./commands/dlq.js')).registerDlq,
  },
  dashboard: {
    term: 'dashboard',
    description: 'Web dashboard: crawl overview with group pause/resume, queues (Bull Board) and dead-letter review; loopback only unless credentials are set',
    load: async () => (await import('./commands/dashboard.js')).registerDashboard,
  },
  results: {
    term: 'results',
    description: "Read a crawl's results back from the PostgreSQL sink",
    load: async () => (await import('./commands/results.js')).registerResults,
  },
  options: {
    term: 'options',
    description: 'Print every option with its flag, environment variable, config key, default and whether it is fleet-wide (Markdown)',
    load: async () => (await import('./commands/options.js')).registerOptions,
  },
  config: {
    term: 'config',
    description: "The fleet's crawl definition: the crawl-shaping options every worker of the namespace follows",
    load: async () => (await import('./commands/config.js')).registerConfig,
  },
};

/**
 * Registers what this invocation needs: the one command it names (`crawlq
 * worker ...`, `crawlq help worker`), or, for the overview, a listing entry
 * per command without loading any of them.
 */
export async function registerCommands(program: Command, argv: readonly string[]): Promise<void> {
  const words = argv.filter((word) => !word.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  const entry = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry) {
    (await entry.load())(program);
    return;
  }
  for (const listed of Object.values(COMMANDS)) program.command(listed.term).description(listed.description);
}
