#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerCommands } from './command-table.js';
import { EXIT } from './exit-codes.js';
import { checkOptionValues, UsageError } from './option-values.js';

// The same relative path from src/main.ts and dist/main.js.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command()
  .name('crawlq')
  .description('A distributed, polite web crawler on BullMQ and Redis')
  .version(version, '-V, --version', 'print the version and exit')
  .showHelpAfterError()
  .exitOverride();

const args = process.argv.slice(2);
try {
  // Only the named command's modules are loaded (see command-table.ts).
  await registerCommands(program, args);
  if (args.length === 0) {
    // Bare `crawlq` asks what there is: help, and no error.
    program.outputHelp();
    process.exit(EXIT.ok);
  }
  // Commander would take a following flag as an option's value (#10).
  checkOptionValues(program, args);
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Usage errors are input errors: exit 2 like a bad config value.
    process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  process.stderr.write(`crawlq: ${error instanceof Error ? error.message : String(error)}\n`);
  // A bad or conflicting option (e.g. a worker flag the fleet's definition contradicts) is an input error; so is a
  // configuration the services refused (a database password, say). Loaded only now: `--help` must not pay for it.
  const { ConfigError } = await import('@crawlq/config');
  process.exit(error instanceof UsageError || error instanceof ConfigError ? EXIT.usage : EXIT.error);
}
