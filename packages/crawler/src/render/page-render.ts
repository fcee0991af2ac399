import { join } from 'node:path';
import { decodeBody, extractPage } from '@crawlq/extractor';
import type { FetchResult } from '@crawlq/fetcher';
import { BrowserCrashedError, BrowserUnavailableError, renderPage, type BrowserPool, type RenderOptions } from '@crawlq/renderer';
import { urlFingerprint } from '@crawlq/urls';
import { fetchForBrowser, type BrowserRequestServices } from './browser-requests.js';
import type { RenderSummary } from '@crawlq/crawl-control';
import { RenderIncompleteError } from '../errors.js';
import type { RenderVerdicts } from './render-verdicts.js';

/** `--render`, or a limit rule's `render`. */
export type RenderMode = 'never' | 'always' | 'auto';

/** How the pages of one group are rendered (the crawl definition, or the first limit rule that matches the group): whether, and how to wait and act on a page. */
export interface GroupRenderSettings extends Pick<RenderOptions, 'waitFor' | 'scrollSteps' | 'clickSelector' | 'clickSteps'> {
  readonly mode: RenderMode;
}

/** A page as the browser left it. */
export interface RenderOutcome {
  readonly html: string;
  readonly summary: RenderSummary;
}

/** The page a job fetched, about to be recorded. */
export interface RenderInput {
  readonly group: string;
  readonly response: FetchResult;
  /** The job's last attempt: a page missing content is recorded as it is (`complete: false`), not thrown back. */
  readonly lastAttempt: boolean;
}

/** What `processCrawlJob` asks before it extracts a page: render it, or leave it as fetched (undefined). */
export interface PageRenderer {
  render(page: RenderInput, services: BrowserRequestServices): Promise<RenderOutcome | undefined>;
}

export interface PageRendererOptions {
  readonly pool: BrowserPool;
  readonly verdicts: RenderVerdicts;
  /** The settings for a group, read at each page (the crawl definition may change). */
  readonly settingsOf: (group: string) => GroupRenderSettings;
  readonly timeoutMs: () => number;
  readonly blockedTypes: () => ReadonlySet<string>;
  readonly screenshotDir?: string | undefined;
  readonly log?: (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;
}

const LOGGED_REQUESTS = 100;
const RENDERED_CONTENT_TYPE = 'text/html; charset=utf-8';

/** Renders where the group's mode says so (see RenderVerdicts for `auto`). */
export function createPageRenderer(options: PageRendererOptions): PageRenderer {
  return {
    async render({ group, response, lastAttempt }, services) {
      const settings = options.settingsOf(group);
      if (settings.mode === 'never') return undefined;
      let reason: RenderSummary['reason'] = 'always';
      if (settings.mode === 'auto') {
        const decision = await options.verdicts.decide(group);
        if (decision === 'plain') return undefined;
        reason = decision === 'render' ? 'auto' : 'sample';
      }
      const timeoutMs = options.timeoutMs();
      const screenshot = options.screenshotDir === undefined ? undefined : `${urlFingerprint(response.finalUrl)}.png`;
      let rendered;
      try {
        rendered = await renderPage(options.pool, {
          document: { url: response.finalUrl, status: response.status, headers: response.headers, body: response.body },
          fetch: (request, page) => fetchForBrowser(request, { services, ...page }),
          blockedTypes: options.blockedTypes(),
          timeoutMs,
          waitFor: settings.waitFor,
          scrollSteps: settings.scrollSteps,
          clickSelector: settings.clickSelector,
          clickSteps: settings.clickSteps,
          ...(screenshot === undefined || options.screenshotDir === undefined ? {} : { screenshotPath: join(options.screenshotDir, screenshot) }),
        });
      } catch (error) {
        // No browser here is the worker's problem, not the page's: retried, like a crash.
        if (error instanceof BrowserUnavailableError) throw new BrowserCrashedError(error.message, { cause: error });
        throw error;
      }
      const counts = { made: 0, blocked: 0, deferred: 0, failed: 0 };
      for (const request of rendered.requests) counts[request.fate] += 1;
      let judged: Pick<RenderSummary, 'neededBrowser' | 'verdict'> = {};
      if (settings.mode === 'auto') {
        const neededBrowser = browserFoundMore(response, rendered);
        // A page that went without some of its requests may lack what they would
        // have brought: it proves a need, never the absence of one.
        const conclusive = neededBrowser || (counts.deferred === 0 && counts.failed === 0);
        const verdict = conclusive ? await options.verdicts.report(group, neededBrowser) : await options.verdicts.read(group);
        judged = { neededBrowser, ...(verdict ? { verdict: verdict.verdict } : {}) };
      }
      const { missing } = rendered;
      if (missing.length > 0) {
        // Missing content is never recorded as if it were the page: tried
        // again while attempts last (each attempt fetches the document again,
        // so the job's --attempts bound what this costs the site).
        const incomplete = new RenderIncompleteError(response.finalUrl, missing);
        if (!lastAttempt) throw incomplete;
        options.log?.(`${incomplete.message}; last attempt: recorded with complete: false`, 'warn');
      }
      return {
        html: rendered.html,
        summary: {
          reason,
          ...judged,
          settled: rendered.settled,
          steps: rendered.steps,
          renderMs: rendered.renderMs,
          requests: counts,
          log: rendered.requests.slice(0, LOGGED_REQUESTS),
          ...(screenshot === undefined ? {} : { screenshot }),
          complete: missing.length === 0,
          ...(missing.length === 0 ? {} : { missing: missing.map((request) => request.url) }),
        },
      };
    },
  };
}

/** The rendered DOM as the extractor reads it. */
export function renderedBody(outcome: RenderOutcome): { body: Buffer; contentType: string } {
  return { body: Buffer.from(outcome.html, 'utf8'), contentType: RENDERED_CONTENT_TYPE };
}

/**
 * The evidence `auto` judges a group by: the rendered page has links the
 * plain one lacks (at least one, and a tenth of its links), another title,
 * or half as much text again (and 200 characters more).
 */
export function browserFoundMore(plain: FetchResult, rendered: { html: string; title: string; textLength: number }): boolean {
  const url = plain.finalUrl;
  const before = extractPage({ body: plain.body, contentType: plain.contentType, url });
  const after = extractPage({ body: Buffer.from(rendered.html, 'utf8'), contentType: RENDERED_CONTENT_TYPE, url });
  const known = new Set(before.links);
  const added = after.links.filter((link) => !known.has(link)).length;
  if (added > 0 && added >= after.links.length / 10) return true;
  if (rendered.title.trim() !== '' && rendered.title.trim() !== (before.title ?? '').trim()) return true;
  const plainText = visibleTextLength(decodeBody(plain.body, plain.contentType).text);
  return rendered.textLength > plainText * 1.5 + 200;
}

/** Characters of text outside tags, scripts and styles, whitespace collapsed: about what innerText counts. */
function visibleTextLength(html: string): number {
  return html
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim().length;
}
