// The politeness benchmark's web server, in a process of its own: the server's
// clock is the judge of every window, so its timestamps must not wait for the
// benchmark's own work (enqueueing, polling the queue). Spoken to over the IPC
// channel: it answers 'ready' with the port, then 'urls', 'records', 'reset'
// and 'close' requests.
import { startDemoSite, type SiteSpec } from '@crawlq/demo-site';

type Request =
  | { readonly type: 'urls'; readonly pages: readonly (readonly [string, number])[] }
  | { readonly type: 'records' }
  | { readonly type: 'reset' }
  | { readonly type: 'close' };

const send = (message: unknown): void => {
  process.send?.(message);
};

const site = await startDemoSite(JSON.parse(process.argv[2] ?? '{}') as SiteSpec);
process.on('message', (message: Request) => {
  switch (message.type) {
    case 'urls':
      send({ type: 'urls', urls: message.pages.map(([host, page]) => site.urlOf(host, page)) });
      break;
    case 'records':
      send({ type: 'records', records: site.requests });
      break;
    case 'reset':
      site.resetRecords();
      send({ type: 'reset' });
      break;
    case 'close':
      void site.close().then(() => process.exit(0));
      break;
  }
});
send({ type: 'ready', port: site.port });
