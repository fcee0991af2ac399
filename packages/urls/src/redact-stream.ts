import { redactOutput } from './redact-url.js';

const GUARDED = Symbol('crawlq.redacted');

/**
 * Every later write of text to `stream` (a process's stderr) passes through
 * {@link redactOutput} first: the last guard, so a message that reaches the
 * stream without its own redaction (a dependency's error, a worker's line
 * relayed by `crawl`) still shows no credentials. Idempotent. Not for data
 * streams such as `results export` on stdout, whose records must stay as stored.
 */
export function redactWrites(stream: NodeJS.WritableStream): void {
  const guarded = stream as NodeJS.WritableStream & { [GUARDED]?: true };
  if (guarded[GUARDED]) return;
  guarded[GUARDED] = true;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = (chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') return write(redactOutput(chunk), ...rest);
    if (chunk instanceof Uint8Array) return write(redactOutput(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')), ...rest);
    return write(chunk, ...rest);
  };
}
