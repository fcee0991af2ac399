export { BrowserPool, type BrowserPoolOptions, type BrowserPoolStats } from './browser-pool.js';
export { renderPage } from './render-page.js';
export { CHROMIUM_FLAGS, CRAWLQ_DISABLED_FEATURES, PLAYWRIGHT_DISABLED_FEATURES, findChromium, type ChromiumFlags } from './chromium-launch.js';
export { proportionalBytes, treeMemoryBytes } from './process-tree.js';
export { BrowserCrashedError, BrowserUnavailableError } from './errors.js';
export {
  CONTENT_TYPES,
  DEFAULT_BLOCKED_TYPES,
  type BrowserRequest,
  type BrowserRequestPage,
  type FetchedDocument,
  type RenderedPage,
  type RenderedRequest,
  type RenderOptions,
  type RequestFate,
  type SubrequestAnswer,
} from './render-types.js';
