#!/usr/bin/env node
// The entry of the bundled worker, dist/crawlq-worker.js (bundle.mjs):
// `crawlq worker` and nothing else, in one file, so a worker `crawl` spawns
// starts without resolving and compiling a thousand modules.
import { Command } from 'commander';
import { registerWorker } from './commands/worker.js';
import { runProgram } from './run-program.js';

const program = new Command().name('crawlq').showHelpAfterError().exitOverride();

await runProgram(program, (registering) => {
  registerWorker(registering);
  return Promise.resolve();
});
