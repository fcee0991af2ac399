import { Transform, type Readable } from 'node:stream';

/** Options of {@link cappedBody}. */
export interface CappedBodyOptions {
  /** Most bytes the body may have; one more fails it with `tooLarge()`. */
  readonly maxBytes: number;
  readonly tooLarge: () => Error;
  /** Maps an error of `source` to the one the body fails with. */
  readonly translate: (error: unknown) => unknown;
}

/**
 * A response body handed out while it arrives: passes `source` through with
 * backpressure, counting bytes as they pass (after decompression, so a gzip
 * bomb is stopped at the cap, not at the end). Whatever ends the body (its
 * end, an error, the cap, the consumer's `destroy()`) ends the download too,
 * so an abandoned body never keeps its connection.
 */
export function cappedBody(source: Readable, options: CappedBodyOptions): Readable {
  let bytes = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) callback(options.tooLarge());
      else callback(null, chunk);
    },
  });
  const fail = (error: unknown): void => {
    const translated = options.translate(error);
    body.destroy(translated instanceof Error ? translated : new Error(String(translated)));
  };
  source.on('error', fail);
  body.once('close', () => source.destroy());
  if (source.errored !== null) fail(source.errored);
  else if (source.destroyed) fail(new Error('the response was closed before its body was read'));
  else source.pipe(body);
  return body;
}
