#!/usr/bin/env node
import { ConfigError } from '@crawlq/config';
import { Command, CommanderError } from 'commander';
import { registerCrawl } from './commands/crawl.js';
import { registerConfig } from './commands/config.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerDemo } from './commands/demo.js';
import { registerDlq } from './commands/dlq.js';
import { registerGroup } from './commands/group.js';
import { registerOptions } from './commands/options.js';
import { registerResults } from './commands/results.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerStatus } from './commands/status.js';
import { registerWorker } from './commands/worker.js';

const program = new Command()
  .name('crawlq')
  .description('A distributed, polite web crawler on BullMQ and Redis')
  .showHelpAfterError()
  .exitOverride();

registerCrawl(program);
registerEnqueue(program);
registerWorker(program);
registerStatus(program);
registerDemo(program);
registerGroup(program);
registerDlq(program);
registerDashboard(program);
registerResults(program);
registerOptions(program);
registerConfig(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Usage errors are input errors: exit 2 like a bad config value.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  process.stderr.write(`crawlq: ${error instanceof Error ? error.message : String(error)}\n`);
  // A bad or conflicting option (e.g. a worker flag the fleet's definition contradicts) is an input error.; so is a
  // configuration the services refused (a database password, say).
  process.exit(error instanceof ConfigError ? 2 : 1);
}
