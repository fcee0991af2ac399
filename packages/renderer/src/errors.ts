import { CrawlqError } from '@crawlq/errors';

/**
 * The browser died or stopped answering while it had the page (killed, out of
 * memory, hung past the render's bound). Retryable: the job uses one attempt
 * and the next render gets a fresh browser.
 */
export class BrowserCrashedError extends CrawlqError {
  override readonly name = 'BrowserCrashedError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retryable: true, cause: options?.cause });
  }
}

/**
 * No browser can be started here (no Chromium at the configured path, or it
 * exits at once). Not the page's fault, and retrying will not help until an
 * operator installs one: the message says how.
 */
export class BrowserUnavailableError extends CrawlqError {
  override readonly name = 'BrowserUnavailableError';
  readonly executablePath: string;

  constructor(executablePath: string, options?: { cause?: unknown }) {
    super(
      `no usable Chromium at ${executablePath} (install Debian's chromium package with \`apt-get install -y chromium\`, Homebrew's \`brew install --cask chromium\`, or set --chromium-path)`,
      { retryable: false, cause: options?.cause },
    );
    this.executablePath = executablePath;
  }
}
