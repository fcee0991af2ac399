// `pnpm bench [crawl|enqueue|...]`: prints figures measured in this run.
import { benchAdaptive } from './adaptive.js';
import { benchCliStartup } from './cli-startup.js';
import { benchCrawlThroughput } from './crawl-throughput.js';
import { benchEnqueue } from './enqueue-throughput.js';
import { benchNginxPacing } from './nginx-pacing.js';
import { benchPoliteness } from './politeness.js';
import { benchSeenSet } from './seen-set-memory.js';
import { benchSinks } from './sink-throughput.js';
import { checkBuildCurrent, CRAWLQ_UNDER_TEST } from './support.js';
import { benchWorkerStart } from './worker-start.js';

const log = (line: string) => process.stdout.write(`${line}\n`);
const benches: Record<string, () => Promise<unknown>> = {
  adaptive: () => benchAdaptive(log),
  crawl: () => benchCrawlThroughput(log),
  'cli-startup': () => benchCliStartup(log),
  enqueue: () => benchEnqueue(log),
  'handler-api': async () => (await import('./handler-api.js')).benchHandlerApi(log),
  narrow: async () => (await import('./regimes.js')).benchNarrow(log),
  nginx: () => benchNginxPacing(log),
  politeness: () => benchPoliteness(log),
  regimes: async () => (await import('./regimes.js')).benchRegimes(log),
  render: async () => (await import('./render.js')).benchRender(log),
  'revisit-store': async () => (await import('./revisit.js')).benchRevisitStore(log),
  'revisit-freshness': async () => (await import('./revisit.js')).benchRevisitFreshness(log),
  'revisit-model': async () => (await import('./revisit-model.js')).benchRevisitModel(log),
  rss: async () => (await import('./worker-rss.js')).benchWorkerRss(log),
  scale: async () => (await import('./scale.js')).benchScale(log),
  'server-gate': async () => (await import('./server-gate.js')).benchServerGate(log),
  'seen-set': () => benchSeenSet(log),
  shards: async () => (await import('./shards.js')).benchShards(log),
  sinks: () => benchSinks(log),
  wide: async () => (await import('./regimes.js')).benchWide(log),
  'worker-start': () => benchWorkerStart(log),
};

const selected = process.argv.slice(2).filter((name) => !name.startsWith('-'));
// `narrow` and `wide` are the two halves of `regimes`, runnable on their own.
const PARTS = new Set(['narrow', 'wide']);
const names = selected.length > 0 ? selected : Object.keys(benches).filter((name) => !PARTS.has(name));
const unknown = names.find((name) => !Object.hasOwn(benches, name));
if (unknown !== undefined) {
  process.stderr.write(`unknown bench "${unknown}"; choose from ${Object.keys(benches).join(', ')}\n`);
  process.exit(2);
}
try {
  checkBuildCurrent();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
log(`crawlq under test: ${CRAWLQ_UNDER_TEST}`);
for (const name of names) {
  const bench = benches[name];
  if (!bench) continue;
  log(`== ${name}`);
  await bench();
}
