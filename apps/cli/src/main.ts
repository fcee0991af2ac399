#!/usr/bin/env node
import { ConfigError } from '@crawlq/config';
import { Command, CommanderError } from 'commander';
import { registerCommands } from './command-table.js';
import { checkOptionValues } from './option-values.js';

const program = new Command()
  .name('crawlq')
  .description('A distributed, polite web crawler on BullMQ and Redis')
  .showHelpAfterError()
  .exitOverride();

try {
  // Only the named command's modules are loaded (see command-table.ts).
  await registerCommands(program, process.argv.slice(2));
  // Commander would take a following flag as an option's value (#10).
  checkOptionValues(program, process.argv.slice(2));
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
