import { findChromium, type BrowserRequest, type FetchedDocument, type SubrequestAnswer } from '../src/index.js';

/** The system Chromium the tests drive; undefined skips them (with a warning). */
export const chromium = findChromium();
if (chromium === undefined) console.warn('renderer tests skipped: no system Chromium (apt-get install -y chromium)');

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A plain fetch standing in for the crawler's gated one. */
export async function plainFetch(request: BrowserRequest): Promise<SubrequestAnswer> {
  const response = await fetch(request.url);
  return { fate: 'made', status: response.status, headers: Object.fromEntries(response.headers), body: Buffer.from(await response.arrayBuffer()) };
}

export async function documentOf(url: string): Promise<FetchedDocument> {
  const response = await fetch(url);
  return { url, status: response.status, headers: Object.fromEntries(response.headers), body: Buffer.from(await response.arrayBuffer()) };
}

export function linksOf(html: string): string[] {
  return [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1] ?? '');
}
