/**
 * The browser died or stopped answering while it had the page (killed, out of
 * memory, hung past the render's bound). Retryable: the job uses one attempt
 * and the next render gets a fresh browser.
 */
export class BrowserCrashedError extends Error {
  override readonly name = 'BrowserCrashedError';
  readonly retryable = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * No browser can be started here (no Chromium at the configured path, or it
 * exits at once). Not the page's fault, and retrying will not help until an
 * operator installs one: the message says how.
 */
export class BrowserUnavailableError extends Error {
  override readonly name = 'BrowserUnavailableError';
  readonly retryable = false;
  readonly executablePath: string;

  constructor(executablePath: string, options?: { cause?: unknown }) {
    super(
      `no usable Chromium at ${executablePath} (install Debian's chromium package with \`apt-get install -y chromium\`, Homebrew's \`brew install --cask chromium\`, or set --chromium-path)`,
      options,
    );
    this.executablePath = executablePath;
  }
}
