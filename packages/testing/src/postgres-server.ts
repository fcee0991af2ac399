import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/**
 * A private PostgreSQL server started for one test file in a temp dir, on a
 * free loopback port; never the machine's own server on 5432.
 */
export interface TestPostgres extends AsyncDisposable {
  /** postgres://crawlq:PASSWORD@127.0.0.1:PORT/postgres (password auth, as in production). */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** Stops the server the way a crash does (`pg_ctl stop -m immediate`). */
  crash(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Debian keeps initdb and pg_ctl outside PATH, under /usr/lib/postgresql/<version>/bin. */
async function binDir(): Promise<string> {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = (await readdir(root)).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) if (existsSync(join(root, version, 'bin', 'pg_ctl'))) return join(root, version, 'bin');
  }
  try {
    const { stdout } = await run('pg_config', ['--bindir']);
    return stdout.trim();
  } catch {
    throw new Error('PostgreSQL server binaries not found: install the postgresql package (infra/setup.sh does)');
  }
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = await binDir();
  const dir = await mkdtemp(join(tmpdir(), 'crawlq-test-pg-'));
  // PostgreSQL refuses to run as root: as root, the server runs as `postgres`.
  const asRoot = userInfo().uid === 0;
  const command = (tool: string, args: readonly string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), [...args]);
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pw');
  await writeFile(pwfile, password);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    await chown(pwfile, Number(stdout.trim()), Number(gid.trim()));
    await chmod(dir, 0o700);
  }
  await command('initdb', ['-D', data, '-U', 'crawlq', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const log = join(dir, 'server.log');
  // fsync off: test speed; a `-m immediate` stop keeps the OS cache, so no committed row is lost by it.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=60`;
  const start = async () => {
    await command('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
  };
  await start();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    })());
  return {
    url: `postgres://crawlq:${password}@127.0.0.1:${port}/postgres`,
    port,
    password,
    async crash() {
      await command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    start,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
