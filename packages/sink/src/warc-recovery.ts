import { open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { hostLabel, parseOpenWarcFileName, type OpenWarcFile } from './warc-file-name.js';
import { WARC_LEASE_TTL_MS, type WarcWriterLease } from './warc-lease.js';
import { completeRecordsLength } from './warc-members.js';

export interface WarcRecoveryOptions {
  readonly dir: string;
  /** Only `.open` files of writers with this prefix (the crawl's namespace) are judged: their leases are in `lease`. */
  readonly prefix: string;
  readonly lease: WarcWriterLease;
  /** The writers of this process: their files are live whatever the lease store says. */
  readonly self?: readonly string[];
  /** Only these `.open` files (a later look at files a first pass left); all when absent. */
  readonly only?: ReadonlySet<string>;
}

/** A `.open` file a stopped writer left, now closed under the name its records carry. */
export interface RecoveredWarcFile {
  /** The closed file's name (no directory). */
  readonly file: string;
  readonly writer: string;
  /** Bytes of whole records kept. */
  readonly keptBytes: number;
  /** Bytes of an unfinished record cut off its end. */
  readonly cutBytes: number;
  /** The file held no whole record, not even its warcinfo, so no page points into it: it was deleted. */
  readonly removed: boolean;
}

export interface WarcRecoveryPass {
  readonly recovered: readonly RecoveredWarcFile[];
  /** `.open` files whose writer holds a lease: look again once it may have ended. */
  readonly leased: readonly { readonly name: string; readonly writer: string; readonly remainingMs: number }[];
  /** `.open` files left alone because their writer's pid is alive on this host. */
  readonly alive: readonly string[];
}

/**
 * Finds the `.open` files that stopped writers left (a worker killed, a
 * machine lost), cuts each at its last whole record and closes it under the
 * name its records carry, so every location a page record holds resolves.
 *
 * A writer is taken for stopped only when its lease is gone, and, for a
 * writer on this host, its pid is not alive either. The lease is what makes
 * another host's file safe to take: a pid says nothing across machines, and
 * not even across containers that share a host name. A pid alive here keeps
 * a file too (a worker of a version without leases, mid-upgrade). Recovering
 * a file twice, by two workers at once, cuts it at the same place and renames
 * it once: nothing needs a lock.
 */
export async function recoverWarcFiles(options: WarcRecoveryOptions): Promise<WarcRecoveryPass> {
  const dir = resolve(options.dir);
  const here = hostLabel();
  const self = new Set(options.self ?? []);
  const recovered: RecoveredWarcFile[] = [];
  const leased: { name: string; writer: string; remainingMs: number }[] = [];
  const alive: string[] = [];
  for (const name of await readdir(dir)) {
    if (options.only && !options.only.has(name)) continue;
    const file = parseOpenWarcFileName(name, options.prefix);
    if (!file || self.has(file.writer)) continue;
    const remainingMs = await options.lease.remainingMs(file.writer);
    if (remainingMs > 0) {
      leased.push({ name, writer: file.writer, remainingMs });
      continue;
    }
    if (file.host === here && file.pid !== process.pid && pidAlive(file.pid)) {
      alive.push(name);
      continue;
    }
    const done = await closeAtLastRecord(dir, name, file);
    if (done) recovered.push(done);
  }
  return { recovered, leased, alive };
}

async function closeAtLastRecord(dir: string, name: string, file: OpenWarcFile): Promise<RecoveredWarcFile | undefined> {
  const path = join(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(path, 'r+');
  } catch (error) {
    // Closed meanwhile, by its writer or another worker's recovery.
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  let size: number;
  let kept: number;
  try {
    size = (await handle.stat()).size;
    kept = await completeRecordsLength(handle);
    if (kept < size) await handle.truncate(kept);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const gone = (error: unknown) => {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    return false;
  };
  const closed = kept === 0 ? await unlink(path).then(() => true, gone) : await rename(path, join(dir, file.closedName)).then(() => true, gone);
  return closed ? { file: file.closedName, writer: file.writer, keptBytes: kept, cutBytes: size - kept, removed: kept === 0 } : undefined;
}

/** Signal 0 asks whether the pid exists; EPERM means it does, under another user. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/** Recovery running in the background of a worker. */
export interface WarcRecovery {
  /** Stops looking again; resolves once a pass under way has ended. */
  stop(): Promise<void>;
}

/**
 * Recovers what stopped writers left when a worker starts, then looks again
 * at the files whose lease was still running (a writer killed a moment ago
 * holds one for up to {@link WARC_LEASE_TTL_MS}) until each is recovered or
 * closed by its live writer. Files opened later are the next start's business.
 */
export function startWarcRecovery(options: WarcRecoveryOptions & { readonly log: (line: string, level?: 'info' | 'warn') => void }): WarcRecovery {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const later = (only: ReadonlySet<string> | undefined, ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass(only);
    }, ms);
    timer.unref();
  };
  const pass = async (only: ReadonlySet<string> | undefined): Promise<void> => {
    try {
      const result = await recoverWarcFiles({ ...options, ...(only ? { only } : {}) });
      for (const file of result.recovered) options.log(describeRecovered(file));
      if (result.leased.length === 0) return;
      const soonest = Math.min(...result.leased.map((file) => file.remainingMs));
      later(new Set(result.leased.map((file) => file.name)), Math.min(soonest, WARC_LEASE_TTL_MS) + 500);
    } catch (error) {
      options.log(`could not recover the WARC files stopped writers left (trying again): ${String(error)}`, 'warn');
      later(only, WARC_LEASE_TTL_MS);
    }
  };
  running = pass(options.only);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

function describeRecovered(file: RecoveredWarcFile): string {
  const from = `left by the stopped writer ${file.writer}`;
  if (file.removed) return `removed the WARC file ${file.file}.open ${from}: it held no whole record (${file.cutBytes} bytes)`;
  const cut = file.cutBytes === 0 ? 'nothing to cut' : `cut ${file.cutBytes} bytes of an unfinished record`;
  return `recovered the WARC file ${file.file} ${from}: kept ${file.keptBytes} bytes of whole records, ${cut}`;
}
