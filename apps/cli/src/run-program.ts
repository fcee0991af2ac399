import { redactWrites } from '@crawlq/urls';
import { CommanderError, type Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { UsageError } from './errors.js';
import { checkOptionValues } from './option-values.js';

/**
 * Registers what this invocation needs, parses the command line and runs the
 * command, with crawlq's exit codes: what the CLI (main.ts) and the bundled
 * worker (worker-main.ts) share.
 */
export async function runProgram(program: Command, register: (program: Command, args: readonly string[]) => Promise<void>): Promise<void> {
  const args = process.argv.slice(2);
  // Whatever reaches stderr (errors, log lines, a worker's relayed lines) shows no credentials.
  redactWrites(process.stderr);
  try {
    await register(program, args);
    if (args.length === 0) {
      // Bare `crawlq` asks what there is: help, and no error.
      program.outputHelp();
      process.exit(EXIT.ok);
    }
    // Commander would take a following flag as an option's value.
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
}
