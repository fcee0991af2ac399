// The benchmarks' judging web server: the demo site in a process of its own
// (site-process.ts), spoken to over IPC.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RequestRecord, SiteSpec } from '@crawlq/demo-site';
import { exited, startScript } from './support.js';

const SITE_PROCESS = fileURLToPath(new URL('./site-process.ts', import.meta.url));

/** The demo site running in site-process.ts. */
export interface SiteProcess {
  readonly port: number;
  /** Whether it runs at a raised scheduling priority (needs root). */
  readonly raisedPriority: boolean;
  urls(pages: readonly (readonly [string, number])[]): Promise<string[]>;
  records(): Promise<RequestRecord[]>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the judging web server in a process of its own and, where allowed,
 * at a raised priority: on a 2-core machine shared with three workers and
 * Redis, a starved server would stamp requests late, and a late stamp on the
 * first start of a window looks like one start too many in the next.
 */
export async function startSiteProcess(spec: SiteSpec): Promise<SiteProcess> {
  const child = startScript(SITE_PROCESS, [JSON.stringify(spec)], {}, { ipc: true });
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: { type?: string }) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message as T);
      };
      const onExit = () => reject(new Error(`the site process exited while waiting for '${type}'`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { port } = await next<{ port: number }>('ready');
  const raisedPriority = process.getuid?.() === 0 && child.pid !== undefined && spawnSync('renice', ['-n', '-10', '-p', String(child.pid)]).status === 0;
  return {
    port,
    raisedPriority,
    async urls(pages) {
      const reply = next<{ urls: string[] }>('urls');
      child.send({ type: 'urls', pages });
      return (await reply).urls;
    },
    async records() {
      const reply = next<{ records: RequestRecord[] }>('records');
      child.send({ type: 'records' });
      return (await reply).records;
    },
    async reset() {
      const reply = next('reset');
      child.send({ type: 'reset' });
      await reply;
    },
    async close() {
      child.send({ type: 'close' });
      await exited(child);
    },
  };
}
