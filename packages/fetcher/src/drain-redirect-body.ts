import type { PlainResponse } from 'got';
import { PolicyViolation, RedirectBodyTimeoutError } from './errors.js';

/** Options of {@link drainRedirectBody}. */
export interface DrainOptions {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** Called (before the connection is cut) when the body passes `maxBytes`. */
  readonly onTooLarge: () => void;
}

/**
 * Waits until got has drained a redirect response's body, within a size cap
 * and a deadline.
 *
 * got resumes a redirect response and moves on to the next hop without waiting,
 * with its timeouts already cancelled: an endless redirect body would then be
 * drained forever, and a same-host next hop could not reuse the busy socket.
 * Waiting here (got awaits beforeRedirect hooks) bounds the drain and frees the
 * keep-alive socket first. Most redirect bodies are empty or already received.
 *
 * On a violation the connection is cut and the returned promise rejects; got
 * then fails the attempt with that error (got's own "aborted" error arrives
 * later and is ignored).
 */
export async function drainRedirectBody(response: PlainResponse, options: DrainOptions): Promise<void> {
  if (response.readableEnded || response.destroyed) return;
  await new Promise<void>((resolve, reject) => {
    let bytes = 0;
    const cleanup = (): void => {
      clearTimeout(timer);
      response.off('data', onData);
      response.off('end', onDone);
      response.off('close', onDone);
      response.off('error', onDone);
    };
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
      // Cutting the socket (not just this stream) also stops a decompression
      // pipeline, whose outer stream does not propagate destroy() inwards.
      response.socket.destroy();
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        options.onTooLarge();
        fail(new PolicyViolation('body-too-large', `redirect body exceeds ${options.maxBytes} bytes`));
      }
    };
    // An error or early close ends the drain too; got reports those itself.
    const onDone = (): void => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      fail(new RedirectBodyTimeoutError(`redirect body not finished within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    response.on('data', onData);
    response.once('end', onDone);
    response.once('close', onDone);
    response.once('error', onDone);
  });
}
