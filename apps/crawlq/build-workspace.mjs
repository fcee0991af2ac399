// The first step of `pnpm pack` (and `docs:api`): the workspace packages this
// package bundles, built, since its declarations are made from theirs. When
// `pnpm build` is current (apps/cli/build-freshness.mjs), nothing is run: even
// a turbo run that finds every task cached writes each output file again, and
// each is missing for a moment meanwhile, under any crawlq process starting
// from the build then. The test suite packs while other tests run the CLI:
// a worker once died on a chunk that was not there.
import { spawnSync } from 'node:child_process';
import { staleReason } from '../cli/build-freshness.mjs';

const stale = staleReason();
if (stale === undefined) {
  process.stdout.write('crawlq: the workspace build is current; not rebuilt\n');
} else {
  process.stdout.write(`crawlq: building the workspace packages (${stale})\n`);
  const result = spawnSync('turbo', ['run', 'build', '--filter=crawlq^...', '--output-logs=errors-only'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
