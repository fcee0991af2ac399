import { mkdirSync } from 'node:fs';
import type { CrawlqConfig } from '@crawlq/config';
import { BrowserPool, BrowserUnavailableError, DEFAULT_BLOCKED_TYPES, findChromium } from '@crawlq/renderer';
import { hostMatchesGlob } from '@crawlq/urls';
import { createPageRenderer, type GroupRenderSettings, type PageRenderer } from './page-render.js';
import { RenderVerdicts } from './render-verdicts.js';
import type { CrawlServices } from '@crawlq/crawl-control';

/** A worker's rendering: its browser pool and the renderer jobs call. */
export interface RenderParts {
  readonly renderer: PageRenderer;
  readonly pool: BrowserPool;
  close(): Promise<void>;
}

/** Whether any page of the crawl may be rendered: --render, or a limit rule's `render`. */
export function rendersAny(config: CrawlqConfig): boolean {
  return config.render !== 'never' || config.limitRules.some((rule) => rule.render !== undefined && rule.render !== 'never');
}

/** The render settings of `group`: the first limit rule that matches it, over the crawl's --render. */
export function groupRenderSettings(config: CrawlqConfig, group: string): GroupRenderSettings {
  const rule = config.limitRules.find((candidate) => hostMatchesGlob(group, candidate.match));
  return {
    mode: rule?.render ?? config.render,
    waitFor: rule?.waitFor,
    scrollSteps: rule?.scrollSteps,
    clickSelector: rule?.clickSelector,
    clickSteps: rule?.clickSteps,
  };
}

/**
 * Sets rendering up for a worker (also when the crawl renders nothing yet:
 * the definition may turn it on later; no browser starts before the first
 * page that needs one). A crawl that renders needs a Chromium here: a worker
 * without one refuses to start, rather than failing every page.
 * @throws BrowserUnavailableError
 */
export function openRenderParts(services: CrawlServices, options: { log: (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void }): RenderParts {
  const own = services.config;
  if (rendersAny(own) && findChromium(own.chromiumPath) === undefined) throw new BrowserUnavailableError(own.chromiumPath ?? '/usr/bin/chromium');
  if (own.screenshot !== undefined) mkdirSync(own.screenshot, { recursive: true });
  const pool = new BrowserPool({
    executablePath: own.chromiumPath,
    pages: own.browserPages,
    restartAfterPages: own.browserRestartPages,
    maxMemoryBytes: own.browserMaxMemory,
    userAgent: own.userAgent,
    log: options.log,
  });
  const verdicts = new RenderVerdicts(services.redis, own.namespace);
  const renderer = createPageRenderer({
    pool,
    verdicts,
    settingsOf: (group) => groupRenderSettings(services.config, group),
    timeoutMs: () => services.config.renderTimeout,
    blockedTypes: () => {
      const loaded = new Set(services.config.renderResources);
      return new Set([...DEFAULT_BLOCKED_TYPES].filter((type) => !loaded.has(type)));
    },
    screenshotDir: own.screenshot,
    log: options.log,
  });
  return { renderer, pool, close: () => pool.close() };
}
