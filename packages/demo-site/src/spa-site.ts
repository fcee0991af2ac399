import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { now, RequestLog, type RequestRecord } from './request-log.js';

/** Which loopback addresses the fixture's three hosts listen on. */
export interface SpaSiteSpec {
  /** The single-page app: shells whose content comes from its own /api (XHR). */
  readonly appHost: string;
  /** Serves the app's script (a second host, a group of its own). */
  readonly scriptHost: string;
  /** Plain HTML pages, beside the app. */
  readonly staticHost: string;
  /** App pages besides the never-settling one. @default 6 */
  readonly appPages?: number;
  /** Static pages. @default 10 */
  readonly staticPages?: number;
  /**
   * Links on each static page. Unset: a chain (page i links to i+1 and i+2),
   * where each page is found only once the one before it was read. A number k:
   * a k-ary tree (page i links to k*i+1 .. k*i+k), the shape of a site's own
   * navigation, where pages are found faster than they are read.
   */
  readonly staticFanOut?: number;
  /** Bytes of filler text per page (a bench makes pages heavier). @default 200 */
  readonly textBytes?: number;
  /**
   * Milliseconds the app host waits before it answers a path (unset: no
   * wait). A test holds one page's content this way to catch its render
   * half-way.
   */
  readonly answerDelayMs?: (path: string) => number;
}

/** A running fixture. */
export interface SpaSite {
  /** First app page and first static page. */
  readonly seeds: readonly string[];
  readonly appOrigin: string;
  readonly scriptOrigin: string;
  readonly staticOrigin: string;
  /** Every app page (the never-settling one included) and every static page. */
  readonly appUrls: readonly string[];
  readonly staticUrls: readonly string[];
  /** The URL of the page that polls one URL forever (network never idle, every poll overlapping the ones before it). */
  readonly liveUrl: string;
  /**
   * A page (linked from nowhere) that polls a new URL each time, every one
   * answered after {@link PING_ANSWER_MS}: it never settles.
   */
  readonly busyUrl: string;
  /**
   * An infinite-scroll page (linked from nowhere): each scroll to the bottom
   * loads the next chunk of links, {@link FEED_CHUNKS} chunks in all.
   */
  readonly feedUrl: string;
  /** The links of the feed's first `chunks` chunks. */
  feedLinks(chunks: number): readonly string[];
  /** Links a browser finds on an app page once its "load more" was clicked (its first links and the ones that button adds). */
  expectedLinks(url: string): readonly string[];
  /** Every request any of the three hosts received, in arrival order (`host` is the address). */
  readonly requests: readonly RequestRecord[];
  close(): Promise<void>;
}

/**
 * A loopback single-page app for rendering tests and benchmarks. An app page
 * is an empty shell: a deferred script from the script host fetches
 * `/api<path>` from the app host, then writes the title, the text and the
 * links into the DOM, and shows a "load more" button (`#more`) that fetches
 * `/api<path>/more` and adds more links. A plain fetch of a shell finds no
 * link at all. `/app/live` also polls `/api/ping` (which answers after
 * {@link PING_ANSWER_MS}) at once and then every 200 ms for as long as
 * it is open: its network is never idle. `/app/busy` polls
 * `/api/ping?n=<count>`, a new URL each time. The static host serves ordinary HTML pages,
 * linked in a chain, the kind that needs no browser.
 */
export async function startSpaSite(spec: SpaSiteSpec): Promise<SpaSite> {
  const appPages = spec.appPages ?? 6;
  const staticPages = spec.staticPages ?? 10;
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((spec.textBytes ?? 200) / 27)).slice(0, spec.textBytes ?? 200);
  const log = new RequestLog();
  const servers: Server[] = [];
  const listen = async (host: string, handle: (path: string, response: ServerResponse) => void): Promise<string> => {
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const path = request.url ?? '/';
      const record = log.begin({ host, path, url: `http://${request.headers.host ?? host}${path}`, method: request.method ?? 'GET', userAgent: request.headers['user-agent'] });
      response.once('close', () => {
        record.endedAt = now();
        record.status = response.statusCode;
        if (!response.writableFinished) record.aborted = true;
      });
      handle(path, response);
    });
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  };
  const origins = { app: '', script: '', static: '' };
  const appPath = (index: number) => `/app/${index}`;
  const isPollingPage = (path: string) => path === '/app/live' || path === '/app/busy';
  const firstLinks = (path: string): string[] => {
    if (isPollingPage(path)) return [`${origins.app}${appPath(0)}`];
    const index = Number(path.slice('/app/'.length));
    const links = [`${origins.app}${appPath((index + 1) % appPages)}`];
    if (index === 0) links.push(`${origins.app}/app/live`);
    return links;
  };
  const moreLinks = (path: string): string[] => {
    if (isPollingPage(path)) return [];
    const index = Number(path.slice('/app/'.length));
    return [`${origins.app}${appPath((index + 2) % appPages)}`, `${origins.static}/s/${index % staticPages}`];
  };
  const feedChunk = (chunk: number): string[] => Array.from({ length: FEED_CHUNK_LINKS }, (_, index) => `${origins.app}/feed/item/${chunk * FEED_CHUNK_LINKS + index}`);
  const isAppPage = (path: string) => isPollingPage(path) || (/^\/app\/\d+$/.test(path) && Number(path.slice(5)) < appPages);

  const delayOf = spec.answerDelayMs;
  origins.app = await listen(spec.appHost, (path, response) => {
    const wait = delayOf?.(path) ?? 0;
    if (wait <= 0) return answerApp(path, response);
    const timer = setTimeout(() => answerApp(path, response), wait);
    response.once('close', () => clearTimeout(timer));
  });
  function answerApp(path: string, response: ServerResponse): void {
    if (path === '/robots.txt') return send(response, { status: 200, contentType: 'text/plain', body: 'User-agent: *\nAllow: /\n' });
    if (isAppPage(path)) {
      return send(response, { status: 200, contentType: 'text/html; charset=utf-8', body: `<!doctype html><html><head><title>Loading</title><script defer src="${origins.script}/app.js"></script></head><body><main id="app">Loading...</main><button id="more" hidden>Load more</button></body></html>` });
    }
    if (path === '/feed') return send(response, { status: 200, contentType: 'text/html; charset=utf-8', body: FEED_PAGE });
    const feed = /^\/api\/feed\/(\d+)$/.exec(path);
    if (feed?.[1] !== undefined && Number(feed[1]) < FEED_CHUNKS) return send(response, { status: 200, contentType: 'application/json', body: JSON.stringify({ links: feedChunk(Number(feed[1])) }) });
    // A slow poll (a long poll's answer): the live page is busy for at least this long after it asks.
    if (/^\/api\/ping(\?n=\d+)?$/.test(path)) {
      const timer = setTimeout(() => send(response, { status: 200, contentType: 'application/json', body: '{"ok":true}' }), PING_ANSWER_MS);
      response.once('close', () => clearTimeout(timer));
      return;
    }
    const api = /^\/api(\/app\/(?:\d+|live|busy))(\/more)?$/.exec(path);
    if (api?.[1] !== undefined && isAppPage(api[1])) {
      const page = api[1];
      if (api[2] !== undefined) return send(response, { status: 200, contentType: 'application/json', body: JSON.stringify({ links: moreLinks(page) }) });
      return send(response, { status: 200, contentType: 'application/json', body: JSON.stringify({ title: `App page ${page}`, text: filler, links: firstLinks(page), more: moreLinks(page).length > 0, poll: page === '/app/live' ? 'same' : page === '/app/busy' ? 'new' : false }) });
    }
    send(response, { status: 404, contentType: 'text/plain', body: 'not found' });
  }
  origins.script = await listen(spec.scriptHost, (path, response) => {
    if (path === '/robots.txt') return send(response, { status: 200, contentType: 'text/plain', body: 'User-agent: *\nAllow: /\n' });
    if (path === '/app.js') return send(response, { status: 200, contentType: 'application/javascript', body: APP_SCRIPT });
    send(response, { status: 404, contentType: 'text/plain', body: 'not found' });
  });
  origins.static = await listen(spec.staticHost, (path, response) => {
    if (path === '/robots.txt') return send(response, { status: 200, contentType: 'text/plain', body: 'User-agent: *\nAllow: /\n' });
    const match = /^\/s\/(\d+)$/.exec(path);
    const index = match ? Number(match[1]) : -1;
    if (index < 0 || index >= staticPages) return send(response, { status: 404, contentType: 'text/plain', body: 'not found' });
    const fanOut = spec.staticFanOut;
    const links =
      fanOut === undefined
        ? `<a href="/s/${(index + 1) % staticPages}">next</a> <a href="/s/${(index + 2) % staticPages}">next but one</a>`
        : Array.from({ length: fanOut }, (_, child) => fanOut * index + child + 1).filter((child) => child < staticPages).map((child) => `<a href="/s/${child}">page ${child}</a>`).join(' ');
    send(response, { status: 200, contentType: 'text/html; charset=utf-8', body: `<!doctype html><html><head><title>Static page ${index}</title></head><body><h1>Static page ${index}</h1><p>${filler}</p>${links}</body></html>` });
  });

  const appUrls = [...Array.from({ length: appPages }, (_, index) => `${origins.app}${appPath(index)}`), `${origins.app}/app/live`];
  return {
    seeds: [`${origins.app}${appPath(0)}`, `${origins.static}/s/0`],
    appOrigin: origins.app,
    scriptOrigin: origins.script,
    staticOrigin: origins.static,
    appUrls,
    staticUrls: Array.from({ length: staticPages }, (_, index) => `${origins.static}/s/${index}`),
    liveUrl: `${origins.app}/app/live`,
    busyUrl: `${origins.app}/app/busy`,
    feedUrl: `${origins.app}/feed`,
    feedLinks: (chunks) => Array.from({ length: Math.min(chunks, FEED_CHUNKS) }, (_, chunk) => feedChunk(chunk)).flat(),
    expectedLinks: (url) => {
      const path = new URL(url).pathname;
      return [...firstLinks(path), ...moreLinks(path)];
    },
    get requests() {
      return log.records;
    },
    async close() {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

function send(response: ServerResponse, { status, contentType, body }: { status: number; contentType: string; body: string }): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** How long `/api/ping` takes to answer. */
export const PING_ANSWER_MS = 5_000;

/** Chunks of links the feed loads, one per scroll to the bottom (the first on load). */
export const FEED_CHUNKS = 4;
const FEED_CHUNK_LINKS = 5;

/** Infinite scroll: each chunk adds links 300 px apart; reaching the bottom loads the next one. */
const FEED_PAGE = `<!doctype html><html><head><title>Feed</title></head><body><ul id="feed"></ul><script>
  let next = 0;
  let loading = false;
  const feed = document.getElementById('feed');
  async function load() {
    if (loading || next >= ${FEED_CHUNKS}) return;
    loading = true;
    const data = await (await fetch('/api/feed/' + next)).json();
    next += 1;
    for (const href of data.links) { const item = document.createElement('li'); item.style.height = '300px'; const a = document.createElement('a'); a.href = href; a.textContent = href; item.append(a); feed.append(item); }
    loading = false;
  }
  load();
  addEventListener('scroll', () => { if (innerHeight + scrollY >= document.documentElement.scrollHeight - 100) load(); });
</script></body></html>`;

/** The app: content and links from the app host's API, more on "load more", polls on the live and busy pages. */
const APP_SCRIPT = `(async () => {
  const path = location.pathname;
  const data = await (await fetch('/api' + path)).json();
  document.title = data.title;
  const app = document.getElementById('app');
  app.innerHTML = '<h1></h1><p></p><ul id="links"></ul>';
  app.querySelector('h1').textContent = data.title;
  app.querySelector('p').textContent = data.text;
  const list = app.querySelector('#links');
  const add = (links) => { for (const href of links) { const item = document.createElement('li'); const a = document.createElement('a'); a.href = href; a.textContent = href; item.append(a); list.append(item); } };
  add(data.links);
  if (data.more) {
    const button = document.getElementById('more');
    button.hidden = false;
    button.addEventListener('click', async () => {
      button.hidden = true;
      add((await (await fetch('/api' + path + '/more')).json()).links);
    });
  }
  if (data.poll) { let count = 0; const ping = () => { fetch(data.poll === 'new' ? '/api/ping?n=' + count++ : '/api/ping').catch(() => {}); }; ping(); setInterval(ping, 200); }
})();
`;
