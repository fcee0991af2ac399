#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerCommands } from './command-table.js';
import { runProgram } from './run-program.js';

// The same relative path from src/main.ts and dist/main.js.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command()
  .name('crawlq')
  .description('A distributed, polite web crawler on BullMQ and Redis')
  .version(version, '-V, --version', 'print the version and exit')
  .showHelpAfterError()
  .exitOverride();

// Only the named command's modules are loaded (see command-table.ts).
await runProgram(program, registerCommands);
